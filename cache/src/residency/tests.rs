use super::*;

/// Size of item `k` in these tests: distinct, so byte sums identify mistakes.
fn size(k: u32) -> u64 {
    10 + u64::from(k % 7)
}

/// One whole frame as a renderer runs it, with every item loaded. Returns (builds, evictions).
fn frame(r: &mut Residency<u32>, visible: &[u32], prefetch: &[u32]) -> (Builds<u32>, Vec<u32>) {
    r.begin_frame(visible, prefetch);
    let builds = r.next_builds(|k| Some(size(k)));
    for (k, bytes) in builds.iter() {
        r.mark_built(k, bytes);
    }
    let evicted = r.evictions();
    (builds, evicted)
}

fn keys(b: &Builds<u32>) -> Vec<u32> {
    b.iter().map(|(k, _)| k).collect()
}

#[test]
fn visible_builds_come_before_any_prefetch_and_prefetch_is_one_per_frame() {
    let mut r = Residency::new(10_000);
    let (b, _) = frame(&mut r, &[1, 2, 3], &[10, 11, 12]);
    assert_eq!(b.visible.iter().map(|p| p.0).collect::<Vec<_>>(), vec![1, 2, 3], "all ready visible items, in order");
    assert_eq!(b.prefetch, None, "no prefetch in a frame where a visible build ran");
    for expected in [10, 11, 12] {
        let (b, _) = frame(&mut r, &[1, 2, 3], &[10, 11, 12]);
        assert_eq!(keys(&b), vec![expected], "one prefetch per frame, in priority order");
    }
    let (b, _) = frame(&mut r, &[1, 2, 3], &[10, 11, 12]);
    assert!(b.is_empty());
    assert_eq!(r.stats().prefetch_builds, 3);
    assert_eq!(r.cached().collect::<Vec<_>>(), vec![10, 11, 12]);
}

#[test]
fn prefetch_runs_while_visible_items_are_still_loading() {
    let mut r = Residency::new(10_000);
    r.begin_frame(&[1, 2], &[10]);
    // Visible items not loaded: no visible build ran, so one prefetch may.
    let b = r.next_builds(|k| (k >= 10).then(|| size(k)));
    assert_eq!(keys(&b), vec![10]);
    // Once a visible item is ready, the prefetch waits.
    let b = r.next_builds(|k| (k != 2).then(|| size(k)));
    assert_eq!(keys(&b), vec![1]);
}

#[test]
fn a_cached_item_becoming_visible_again_is_not_rebuilt() {
    let mut r = Residency::new(10_000);
    frame(&mut r, &[1, 2], &[]);
    frame(&mut r, &[3], &[]);
    assert!(r.is_built(1) && !r.is_visible(1));
    let (b, ev) = frame(&mut r, &[1, 2, 3], &[]);
    assert!(b.is_empty(), "cached items are reused, not rebuilt: {b:?}");
    assert!(ev.is_empty());
    assert_eq!(r.stats().builds, 3);
    assert_eq!(r.visible().collect::<Vec<_>>(), vec![1, 2, 3]);
    // A built item named as a prefetch candidate is not rebuilt either.
    let (b, _) = frame(&mut r, &[3], &[1, 2]);
    assert!(b.is_empty());
}

#[test]
fn evictions_are_least_recently_used_first() {
    // Sizes: 1→11, 2→12, 3→13, 4→14, 5→15.
    let mut r = Residency::new(11 + 12 + 13 + 14 + 15);
    frame(&mut r, &[1], &[]);
    frame(&mut r, &[2], &[]); // 1 last used at frame 1
    frame(&mut r, &[3], &[]); // 2 at frame 2
    frame(&mut r, &[5, 4], &[]); // 3 at frame 3; 4 and 5 visible now
                                 // Item 1 becomes visible again and so the most recent of the cached ones afterwards.
    frame(&mut r, &[1, 4, 5], &[]);
    assert_eq!(r.cached().collect::<Vec<_>>(), vec![2, 3]);
    frame(&mut r, &[4, 5], &[]); // 1 cached again, last used at frame 5
    assert_eq!(r.cached().collect::<Vec<_>>(), vec![2, 3, 1]);
    // Shrink the budget so that exactly two cached items must go.
    r.set_budget_bytes(14 + 15 + 11 + 6);
    assert_eq!(r.evictions(), vec![2, 3], "oldest first");
    r.set_budget_bytes(14 + 15);
    assert_eq!(r.evictions(), vec![1]);
    // Ties (same last use) go by key.
    let mut r = Residency::new(1_000);
    frame(&mut r, &[7, 3, 5], &[]);
    frame(&mut r, &[1], &[]);
    r.set_budget_bytes(0);
    assert_eq!(r.evictions(), vec![3, 5, 7], "the visible item 1 stays");
}

#[test]
fn prefetch_candidates_already_cached_are_kept_longest() {
    let mut r = Residency::new(1_000);
    frame(&mut r, &[1], &[]);
    frame(&mut r, &[2], &[]);
    frame(&mut r, &[3], &[1]); // 1 is cached, but named as a prefetch candidate: touched
    assert_eq!(r.cached().collect::<Vec<_>>(), vec![2, 1]);
}

#[test]
fn visible_items_are_never_evicted_and_builds_respect_the_budget() {
    // Sizes: 1→11, 2→12, 8→11, 9→12.
    let mut r = Residency::new(30);
    frame(&mut r, &[8, 9], &[]);
    let (b, ev) = frame(&mut r, &[1], &[]);
    assert_eq!(keys(&b), vec![1]);
    assert_eq!(ev, vec![8], "8 and 9 cached; the oldest goes to bring 11+12+11 under 30");
    assert_eq!(r.resident_bytes(), 23);
    // 1 and 2 visible (23 bytes); 9 (cached) makes way for nothing more: 1+2+9 = 35 > 30.
    let (b, ev) = frame(&mut r, &[1, 2], &[]);
    assert_eq!(keys(&b), vec![2]);
    assert_eq!(ev, vec![9]);
    // A third visible item would overflow: refused (the caller draws a stand-in), nothing visible evicted.
    let (b, ev) = frame(&mut r, &[1, 2, 3], &[4]);
    assert!(b.is_empty(), "{b:?}");
    assert!(ev.is_empty());
    assert_eq!(r.stats().deferred_over_budget, 1);
    assert_eq!(r.visible_to_build(), &[3]);
    assert!(r.resident_bytes() <= 30);
    // With nothing visible built, the first build is allowed even beyond the budget.
    let mut r = Residency::new(5);
    let (b, ev) = frame(&mut r, &[1, 2], &[]);
    assert_eq!(keys(&b), vec![1]);
    assert!(ev.is_empty(), "a visible item is never evicted, even over budget");
    assert_eq!(r.peak_resident_bytes(), 11);
}

#[test]
fn the_frame_upload_budget_spreads_builds_over_frames() {
    // Sizes 1→11, 2→12, 3→13, 4→14: a 25-byte frame budget takes 1 and 2, then 3 (skipping 4
    // would not help: 13+14 > 25), then 4.
    let mut r = Residency::new(1_000).with_frame_upload_budget(25);
    let visible = [1, 2, 3, 4];
    let mut per_frame = Vec::new();
    for _ in 0..4 {
        per_frame.push(keys(&frame(&mut r, &visible, &[]).0));
    }
    assert_eq!(per_frame, vec![vec![1, 2], vec![3], vec![4], vec![]]);
    // An item larger than the frame budget still gets built, alone.
    let mut r = Residency::new(1_000).with_frame_upload_budget(5);
    assert_eq!(keys(&frame(&mut r, &[1, 2], &[]).0), vec![1]);
    assert_eq!(keys(&frame(&mut r, &[1, 2], &[]).0), vec![2]);
    // A smaller item behind one that does not fit goes first.
    let mut r = Residency::new(1_000).with_frame_upload_budget(23);
    assert_eq!(keys(&frame(&mut r, &[1, 3, 7], &[]).0), vec![1, 7]);
}

#[test]
fn remove_forgets_an_item_until_it_is_asked_for_again() {
    let mut r = Residency::new(1_000);
    frame(&mut r, &[1, 2], &[]);
    frame(&mut r, &[2], &[]);
    assert_eq!(r.remove(1), Some(11));
    assert_eq!(r.remove(2), Some(12));
    assert_eq!(r.remove(2), None);
    assert_eq!(r.resident_bytes(), 0);
    assert_eq!(r.cached().count(), 0);
    let (b, _) = frame(&mut r, &[2], &[]);
    assert_eq!(keys(&b), vec![2]);
}

/// A deterministic pseudo-random walk of visible/prefetch sets, checking the invariants after each frame.
#[test]
fn invariants_hold_over_a_random_walk() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u32| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % u64::from(n)) as u32
    };
    let budget = 200;
    let mut r = Residency::new(budget).with_frame_upload_budget(40);
    let mut gpu: BTreeMap<u32, u64> = BTreeMap::new(); // what a renderer would hold
    for _ in 0..2_000 {
        let visible: Vec<u32> = (0..next(12)).map(|_| next(60)).collect();
        let prefetch: Vec<u32> = (0..next(6)).map(|_| next(60)).collect();
        let cached_before: BTreeSet<u32> = r.cached().collect();
        r.begin_frame(&visible, &prefetch);
        for &k in &visible {
            assert!(r.is_built(k) != r.visible_to_build().contains(&k), "{k} is exactly one of visible / to build");
        }
        let ready_mask = next(1 << 12);
        let builds = r.next_builds(|k| (ready_mask >> (k % 12) & 1 == 1).then(|| size(k)));
        assert!(builds.prefetch.is_none() || builds.visible.is_empty());
        for (k, bytes) in builds.iter() {
            assert!(!gpu.contains_key(&k), "{k} built twice");
            assert!(!cached_before.contains(&k));
            r.mark_built(k, bytes);
            gpu.insert(k, bytes);
        }
        let visible_bytes: u64 = visible.iter().collect::<BTreeSet<_>>().iter().filter_map(|k| gpu.get(k)).sum();
        for k in r.evictions() {
            assert!(!visible.contains(&k), "visible {k} evicted");
            assert!(gpu.remove(&k).is_some());
        }
        assert_eq!(r.resident_bytes(), gpu.values().sum::<u64>());
        if visible_bytes <= budget {
            assert!(r.resident_bytes() <= budget, "over budget: {} > {budget}", r.resident_bytes());
        }
        let s = r.stats();
        assert_eq!(s.visible + s.cached, gpu.len());
    }
    assert!(r.peak_resident_bytes() <= budget);
    assert!(r.stats().evictions > 100 && r.stats().prefetch_builds > 10, "{:?}", r.stats());
}

#[test]
fn a_prefetch_build_is_never_evicted_in_the_frame_it_was_built() {
    // Sizes: 1→11, 5→15, 6→16. Budget 40: 5 and 6 cached (31), then prefetch 1 (11) overflows.
    let mut r = Residency::new(40);
    frame(&mut r, &[5, 6], &[]);
    // 5 and 6 are touched as prefetch candidates in the same frame 1 is built; 1 has the smallest
    // key, yet it is the newest and must stay: evicting it would undo this frame's upload.
    let (b, ev) = frame(&mut r, &[], &[5, 6, 1]);
    assert_eq!(keys(&b), vec![1]);
    assert_eq!(ev, vec![5]);
    assert!(r.is_built(1));
}
