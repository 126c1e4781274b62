//! The order C++'s `std::sort` leaves equal elements in, as GCC's library
//! sorts (introsort: median-of-three quicksort down to runs of 16, heap
//! sort past its depth limit, then insertion sort). LogGOPSim sorts the
//! ops an event frees by kind with `std::sort`, which is not stable: above
//! 16 ops, ops of one kind come out in an order its algorithm decides, and
//! that order decides which op gets a CPU first. Sorting the same way is
//! what gives LogGOPSim's times on every schedule.

/// Sorts `v` by `less`, leaving equal elements where GCC's `std::sort`
/// leaves them.
pub fn sort<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool + Copy) {
    let n = v.len();
    if n < 2 {
        return;
    }
    introsort(v, 2 * n.ilog2(), less);
    final_insertion_sort(v, less);
}

const THRESHOLD: usize = 16;

fn introsort<T: Copy>(v: &mut [T], mut depth: u32, less: impl Fn(&T, &T) -> bool + Copy) {
    let mut last = v.len();
    while last > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[..last], less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(&mut v[..last], less);
        introsort(&mut v[cut..last], depth, less);
        last = cut;
    }
}

/// Moves the median of `v[1]`, the middle and the last to `v[0]`, then
/// partitions the rest around it; where the right part begins.
fn partition_pivot<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool) -> usize {
    let (mid, last) = (v.len() / 2, v.len() - 1);
    let (a, b, c) = (1, mid, last);
    let median = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(0, median);
    // Unguarded: the pivot at 0 bounds both scans.
    let (mut first, mut last) = (1, v.len());
    loop {
        while less(&v[first], &v[0]) {
            first += 1;
        }
        last -= 1;
        while less(&v[0], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool + Copy) {
    if v.len() > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        // The first 16 hold the smallest: no bound check below them.
        for i in THRESHOLD..v.len() {
            linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

fn insertion_sort<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool + Copy) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            let x = v[i];
            v.copy_within(0..i, 1);
            v[0] = x;
        } else {
            linear_insert(v, i, less);
        }
    }
}

/// Moves `v[i]` down past the larger ones before it (some element before
/// it is not larger).
fn linear_insert<T: Copy>(v: &mut [T], mut i: usize, less: impl Fn(&T, &T) -> bool) {
    let x = v[i];
    while less(&x, &v[i - 1]) {
        v[i] = v[i - 1];
        i -= 1;
    }
    v[i] = x;
}

fn heap_sort<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool + Copy) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let x = v[parent];
            adjust_heap(v, parent, len, x, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let x = v[last];
        v[last] = v[0];
        adjust_heap(&mut v[..last], 0, last, x, less);
    }
}

/// Sifts the hole at `hole` down to a leaf, then `x` up from there.
fn adjust_heap<T: Copy>(v: &mut [T], mut hole: usize, len: usize, x: T, less: impl Fn(&T, &T) -> bool) {
    let top = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(&v[parent], &x) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[hole] = x;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys 0..3 with their original places: sorted by key, whatever the
    /// order of equal keys.
    #[test]
    fn it_sorts_and_keeps_runs_of_16_stable() {
        let mut rng = fastrand::Rng::with_seed(3);
        for n in [0usize, 1, 2, 5, 16, 17, 40, 300, 5000] {
            let mut v: Vec<(u8, usize)> = (0..n).map(|i| (rng.u8(0..3), i)).collect();
            let mut want = v.clone();
            want.sort_by_key(|x| x.0);
            sort(&mut v, |a, b| a.0 < b.0);
            assert_eq!(
                v.iter().map(|x| x.0).collect::<Vec<_>>(),
                want.iter().map(|x| x.0).collect::<Vec<_>>()
            );
            if n <= THRESHOLD {
                // Insertion sort alone: stable.
                assert_eq!(v, want);
            }
        }
        // The heap sort, reached directly, sorts too.
        let mut v: Vec<u32> = (0..100).map(|_| rng.u32(0..10)).collect();
        heap_sort(&mut v, |a, b| a < b);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }

    /// An order GCC 12's std::sort gives (LogGOPSim's free ops: 2 sends,
    /// 1 receive and 18 computations, freed in that interleaving).
    #[test]
    fn equal_kinds_land_where_gccs_sort_puts_them() {
        let kinds = [3u8, 1, 3, 2, 3, 3, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3];
        let mut v: Vec<(u8, usize)> = kinds.iter().copied().zip(0..).collect();
        sort(&mut v, |a, b| a.0 < b.0);
        let order: Vec<usize> = v.iter().map(|x| x.1).collect();
        assert_eq!(order, GCC_ORDER);
    }

    /// The order `std::sort` (GCC 12, -O2) gave for the test above.
    const GCC_ORDER: [usize; 21] = [
        1, 6, 3, 20, 0, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 5, 4, 2,
    ];
}
