//! Large arrays that light transport reads or writes at random (the BVH, per-vertex and per-cell
//! accumulators) are asked onto transparent huge pages. At hundreds of megabytes, with 4 KiB pages
//! nearly every access also misses the TLB; 2 MiB pages remove most of those page walks. It is a
//! hint: where the OS does not offer huge pages, nothing changes.
//!
//! [`prefetch`] starts loading a line that will be needed shortly, for lookups whose address is
//! known some work before their value is.

/// An empty vector with room for `capacity` elements, its memory advised onto huge pages before
/// anything is written to it.
pub(crate) fn huge_vec<T>(capacity: usize) -> Vec<T> {
    let v = Vec::with_capacity(capacity);
    advise_huge_pages(&v);
    v
}

/// `n` zero elements on memory advised onto huge pages, none of it touched: a zero value of an
/// integer or an array of them makes `vec!` allocate zeroed memory, which for a large array is
/// fresh zero pages from the OS, so an accumulator costs memory only where it is written
/// (`huge_vec` followed by a resize would write every page first).
pub(crate) fn huge_zeroed<T: Clone>(zero: T, n: usize) -> Vec<T> {
    let v = vec![zero; n];
    advise_huge_pages(&v);
    v
}

/// Advises the allocation behind `v` onto huge pages; pages already touched keep their size.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let len = v.capacity() * std::mem::size_of::<T>();
        let start = v.as_ptr() as usize;
        let (lo, hi) = ((start + HUGE - 1) & !(HUGE - 1), (start + len) & !(HUGE - 1));
        if hi > lo {
            // SAFETY: the range lies inside the vector's own allocation; MADV_HUGEPAGE changes
            // only how the kernel backs it, never its contents.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Asks the CPU to start loading the cache line holding `value` (a hint: it never faults and
/// changes no result).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only warms the cache; `value` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch(value as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// [`prefetch`] for every cache line that `values` touches (a hint, like it).
#[inline(always)]
pub(crate) fn prefetch_all<T>(values: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        let start = values.as_ptr() as usize;
        let end = start + std::mem::size_of_val(values);
        let mut line = start & !63;
        while line < end {
            // SAFETY: a prefetch never faults, whatever the address; these lines overlap `values`.
            unsafe { std::arch::x86_64::_mm_prefetch(line as *const i8, std::arch::x86_64::_MM_HINT_T0) };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = values;
}

/// Gives the pages of freed heap memory back to the OS.
pub(crate) fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Allocations of this many bytes or more are mapped on their own (see
/// [`map_large_allocations_alone`]).
const MMAP_THRESHOLD: i32 = 256 << 10;

/// Makes the allocator map every allocation of 256 KiB or more on its own, so that it goes back
/// to the OS when freed. glibc otherwise raises that threshold each time a large mapped block is
/// freed (up to 32 MiB), after which the bake's large, short-lived buffers come from its heap
/// arenas and leave them fragmented: the default world peaked about 100 MiB higher in resident
/// memory (BENCHMARKS.md, "Memory of a whole bake"). A process-wide setting, made once by the
/// program (the CLI), before the work starts.
pub fn map_large_allocations_alone() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning; no allocation is affected retroactively.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}
