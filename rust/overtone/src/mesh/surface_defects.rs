//! Holes and non-manifold edges of a triangle surface.

/// Counts the edges of a triangle surface (`t × 3` vertex indices) used by one triangle (the
/// rims of holes: an open surface) and by more than two (non-manifold). `(0, 0)`: closed and
/// manifold.
pub(crate) fn surface_defects(triangles: &[usize]) -> (usize, usize) {
    let mut edges: Vec<(usize, usize)> = triangles
        .chunks_exact(3)
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    edges.sort_unstable();
    let (mut open, mut nonmanifold) = (0, 0);
    let mut i = 0;
    while i < edges.len() {
        let mut j = i;
        while j < edges.len() && edges[j] == edges[i] {
            j += 1;
        }
        match j - i {
            1 => open += 1,
            2 => {}
            _ => nonmanifold += 1,
        }
        i = j;
    }
    (open, nonmanifold)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tetrahedron's surface is closed; without one face it has a 3-edge hole; a fin glued
    /// to an edge makes that edge non-manifold.
    #[test]
    fn holes_and_fins_are_counted() {
        let closed = [0, 2, 1, 0, 1, 3, 1, 2, 3, 0, 3, 2];
        assert_eq!(surface_defects(&closed), (0, 0));
        assert_eq!(surface_defects(&closed[..9]), (3, 0));
        let mut fin = closed.to_vec();
        fin.extend([0, 1, 4]);
        assert_eq!(surface_defects(&fin), (2, 1));
    }
}
