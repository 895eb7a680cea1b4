//! Fills a view's empty texels (coverage 0) with the colour, normal, AO and depth of the nearest
//! covered texel of the same view, so that no mip level and no bilinear tap inside the view
//! reads the background. The whole view is filled, which is more than the padding any mip needs
//! (it must double per level); views never read across their borders.

use super::capture::ViewMaps;
use std::collections::VecDeque;

/// Fills every empty texel of `view` from its nearest covered texel (8-connected breadth-first
/// order from all covered texels at once, seeds in row order, so the result is deterministic).
/// Coverage (albedo alpha) stays 0 where it was. A view with no covered texel is left as is.
pub fn dilate_view(view: &mut ViewMaps) {
    let n = view.px as i32;
    let mut done: Vec<bool> = view.albedo.iter().map(|a| a[3] > 0).collect();
    let mut queue: VecDeque<usize> = (0..done.len()).filter(|&i| done[i]).collect();
    while let Some(i) = queue.pop_front() {
        let (x, y) = (i as i32 % n, i as i32 / n);
        for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)] {
            let (nx, ny) = (x + dx, y + dy);
            if nx < 0 || ny < 0 || nx >= n || ny >= n {
                continue;
            }
            let j = (ny * n + nx) as usize;
            if done[j] {
                continue;
            }
            done[j] = true;
            let a = view.albedo[i];
            view.albedo[j] = [a[0], a[1], a[2], 0];
            view.normal[j] = view.normal[i];
            view.depth[j] = view.depth[i];
            queue.push_back(j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_texels_take_the_nearest_covered_value_and_stay_uncovered() {
        let px = 8;
        let n = (px * px) as usize;
        let mut v = ViewMaps { px, albedo: vec![[0; 4]; n], normal: vec![[0; 4]; n], depth: vec![0; n] };
        v.albedo[9] = [200, 10, 20, 255]; // (1, 1)
        v.normal[9] = [1, 2, 3, 4];
        v.depth[9] = 777;
        v.albedo[62] = [5, 6, 7, 100]; // (6, 7)
        v.depth[62] = 5;
        dilate_view(&mut v);
        assert_eq!(v.albedo[0], [200, 10, 20, 0]);
        assert_eq!(v.normal[0], [1, 2, 3, 4]);
        assert_eq!(v.depth[0], 777);
        assert_eq!(v.albedo[63], [5, 6, 7, 0]);
        assert_eq!(v.albedo[9][3], 255);
        assert!(v.albedo.iter().all(|a| a[..3] != [0, 0, 0]), "every texel filled");
        let mut empty = ViewMaps { px, albedo: vec![[0; 4]; n], normal: vec![[0; 4]; n], depth: vec![0; n] };
        dilate_view(&mut empty);
        assert!(empty.albedo.iter().all(|a| *a == [0; 4]));
    }
}
