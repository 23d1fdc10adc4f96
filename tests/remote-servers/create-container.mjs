// Create a blob container on an Azurite (or Azure) account:
//   node create-container.mjs BLOB_URL ACCOUNT KEY CONTAINER
// BLOB_URL is the account's endpoint, http://127.0.0.1:PORT/ACCOUNT for
// Azurite. The remote store's client (object_store) has no call that makes
// a container, so the test harness (tests/integration/azurite.rs) makes it
// with Microsoft's own SDK, pinned in package-lock.json.
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";

const [url, account, key, container] = process.argv.slice(2);
if (!container) {
  console.error("usage: node create-container.mjs BLOB_URL ACCOUNT KEY CONTAINER");
  process.exit(2);
}
const service = new BlobServiceClient(url, new StorageSharedKeyCredential(account, key));
await service.getContainerClient(container).create();
