//! Cartesian topologies' maps between a rank and its coordinates, as
//! MPI defines them: row-major (the last dimension varies fastest), and
//! periodic dimensions wrap.

/// Row-major coordinates of rank `r` in a grid of `dims`.
pub fn coords_of(dims: &[i32], mut r: i32) -> Vec<i32> {
    let mut out = vec![0; dims.len()];
    for k in (0..dims.len()).rev() {
        out[k] = r % dims[k];
        r /= dims[k];
    }
    out
}

/// The rank at `coords` (wrapped in the dimensions `periods` marks), or
/// `None` if a coordinate is outside a non-periodic dimension.
pub fn rank_at(dims: &[i32], periods: &[bool], coords: &[i32]) -> Option<i32> {
    let mut r = 0i32;
    for k in 0..dims.len() {
        let mut x = coords[k];
        if periods[k] {
            x = x.rem_euclid(dims[k]);
        } else if x < 0 || x >= dims[k] {
            return None;
        }
        r = r * dims[k] + x;
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_row_major_and_map_back() {
        let dims = [2, 3, 4];
        assert_eq!(coords_of(&dims, 0), [0, 0, 0]);
        assert_eq!(coords_of(&dims, 1), [0, 0, 1]);
        assert_eq!(coords_of(&dims, 4), [0, 1, 0]);
        assert_eq!(coords_of(&dims, 23), [1, 2, 3]);
        let periods = [false; 3];
        for r in 0..24 {
            assert_eq!(rank_at(&dims, &periods, &coords_of(&dims, r)), Some(r));
        }
    }

    #[test]
    fn periodic_dimensions_wrap_and_the_others_end() {
        let dims = [4, 3];
        // A ring in the first dimension, a line in the second.
        let periods = [true, false];
        assert_eq!(rank_at(&dims, &periods, &[-1, 0]), Some(9));
        assert_eq!(rank_at(&dims, &periods, &[4, 2]), Some(2));
        assert_eq!(rank_at(&dims, &periods, &[0, 3]), None);
        assert_eq!(rank_at(&dims, &periods, &[0, -1]), None);
    }
}
