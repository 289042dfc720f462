//! Independent pieces of work run side by side: several litmus files
//! checked at once (`check`, `diff`, `explain`, `hw compare`, through
//! [`crate::check_all`]) and several CUDA programs compiled and run at once
//! (`hw run`). One worker pool serves them all; no answer depends on how
//! many threads it has.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `work` on every item, at most `jobs` at a time. `done` sees each
/// result on the calling thread as soon as it is finished, with its item's
/// index, in the order the results finish; an error from it ends the run
/// (each worker stops after the item in hand) and is returned.
///
/// Workers get the explorer's worker stack, so no answer depends on which
/// thread did the work. The system may refuse threads: the work runs on
/// those it gave, or on the calling thread when it gave none.
pub fn side_by_side<T, R, E>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
    mut done: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let mut spawned = 0;
        for _ in 0..jobs.min(items.len()) {
            let (tx, next, work) = (tx.clone(), &next, &work);
            let worker = std::thread::Builder::new()
                .stack_size(bc_explore::WORKER_STACK)
                .spawn_scoped(scope, move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    if tx.send((i, work(item))).is_err() {
                        break;
                    }
                });
            match worker {
                Ok(_) => spawned += 1,
                Err(_) => break,
            }
        }
        if spawned == 0 {
            // No worker at all: this thread does the work.
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if tx.send((i, work(item))).is_err() {
                    break;
                }
            }
        }
        drop(tx);
        for (i, r) in rx {
            done(i, r)?;
        }
        Ok(())
    })
}

/// [`side_by_side`], with `done` seeing the results in the items' order:
/// an early finisher is held until those before it are in.
pub fn in_order<T, R, E>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
    mut done: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    let mut held = BTreeMap::new();
    let mut due = 0;
    side_by_side(items, jobs, work, |i, r| {
        held.insert(i, r);
        while let Some(r) = held.remove(&due) {
            done(r)?;
            due += 1;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come in the items' order whatever the number of threads.
    #[test]
    fn in_order_keeps_the_items_order() {
        let items: Vec<u64> = (0..50).collect();
        for jobs in [1, 3, 8] {
            let mut seen = Vec::new();
            let r: Result<(), ()> = in_order(
                &items,
                jobs,
                |&x| x * x,
                |y| {
                    seen.push(y);
                    Ok(())
                },
            );
            assert_eq!(r, Ok(()));
            assert_eq!(seen, items.iter().map(|x| x * x).collect::<Vec<_>>());
        }
    }

    /// An error from `done` ends the run and is returned.
    #[test]
    fn an_error_from_done_ends_the_run() {
        let items: Vec<u32> = (0..20).collect();
        let mut seen = 0;
        let r = in_order(
            &items,
            4,
            |&x| x,
            |x| {
                seen += 1;
                if x == 5 {
                    Err(x)
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r, Err(5));
        assert_eq!(seen, 6);
    }
}
