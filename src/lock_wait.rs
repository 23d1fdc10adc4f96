//! The one wait for something another process holds (a session's lock, the
//! hook sessions' lock, the hook server's lock, a session an engine opens):
//! try, and while it is busy try again `poll` apart until `wait` has passed
//! (docs/format.md "Locks" lists what waits how long).

use std::time::{Duration, Instant};

/// One try: taken (`Ok(Some)`), busy (`Ok(None)`: try again) or failed.
pub type Attempt<T, E> = Result<Option<T>, E>;

/// Runs `attempt` until it is not busy or `wait` has passed since the first
/// try; `Ok(None)` when still busy then. At least one try is made.
pub fn within<T, E>(
    wait: Duration,
    poll: Duration,
    mut attempt: impl FnMut() -> Attempt<T, E>,
) -> Attempt<T, E> {
    let start = Instant::now();
    loop {
        if let Some(taken) = attempt()? {
            return Ok(Some(taken));
        }
        if start.elapsed() + poll > wait {
            return Ok(None);
        }
        std::thread::sleep(poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_tried_again_until_the_deadline_and_a_failure_ends_it() {
        let mut tries = 0;
        let got: Attempt<u32, ()> =
            within(Duration::from_millis(50), Duration::from_millis(10), || {
                tries += 1;
                Ok((tries == 3).then_some(7))
            });
        assert_eq!((got, tries), (Ok(Some(7)), 3));
        let mut tries = 0;
        let busy: Attempt<(), ()> =
            within(Duration::from_millis(30), Duration::from_millis(10), || {
                tries += 1;
                Ok(None)
            });
        assert_eq!(busy, Ok(None));
        assert!((2..=4).contains(&tries), "{tries}");
        let failed: Attempt<(), &str> =
            within(Duration::from_secs(5), Duration::from_millis(10), || {
                Err("no")
            });
        assert_eq!(failed, Err("no"));
    }
}
