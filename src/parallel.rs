//! Work spread over a few threads, results kept in input order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `f` on every item on up to `jobs` threads and returns the results in the order of
/// `items`. Once `stop` holds for a result, no further items are started; an item that was
/// never run (stopped early, or no thread could start) gives `None`. A panic in `f` is
/// passed on to the caller.
pub fn map<T, R, F, S>(items: &[T], jobs: usize, f: F, stop: S) -> Vec<Option<R>>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
    S: Fn(&R) -> bool + Sync,
{
    map_with_stack(items, jobs, None, f, stop)
}

/// [`map`] on threads started with `stack` bytes of stack; `f` never runs on the calling
/// thread then. With `None`, default stacks, and one job runs on the calling thread.
pub fn map_with_stack<T, R, F, S>(
    items: &[T],
    jobs: usize,
    stack: Option<usize>,
    f: F,
    stop: S,
) -> Vec<Option<R>>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
    S: Fn(&R) -> bool + Sync,
{
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let jobs = jobs.clamp(1, items.len().max(1));
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(i) else { break };
        let r = f(item);
        if stop(&r) {
            next.store(usize::MAX / 2, Ordering::Relaxed);
        }
        if let Ok(mut slot) = slots[i].lock() {
            *slot = Some(r);
        }
    };
    if jobs == 1 && stack.is_none() {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                let mut b = std::thread::Builder::new();
                if let Some(size) = stack {
                    b = b.stack_size(size);
                }
                // A thread that cannot start leaves the work to the others; if none
                // started, every item stays `None` for the caller to report.
                let _ = b.spawn_scoped(s, work);
            }
        });
    }
    slots
        .into_iter()
        .map(|s| s.into_inner().ok().flatten())
        .collect()
}

/// The number of threads to use by default: the machine's cores.
pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_stops_early() {
        let items: Vec<u32> = (0..100).collect();
        let all = map(&items, 3, |x| x * 2, |_| false);
        assert_eq!(
            all.into_iter().map(Option::unwrap).collect::<Vec<_>>(),
            (0..100).map(|x| x * 2).collect::<Vec<_>>()
        );
        let some = map(&items, 1, |x| *x, |x| *x == 10);
        assert!(some[..=10].iter().all(Option::is_some));
        assert!(some[11..].iter().all(Option::is_none));
    }
}
