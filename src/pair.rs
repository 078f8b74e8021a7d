//! The two ends of a comparison, named: an update goes from one release to
//! another, and every value read of it comes twice, once per end. Named
//! fields say which end a value belongs to where a tuple's `.0` and `.1`
//! left it to the reader (and let two ends be swapped unnoticed).

/// One value for each end of a comparison: `from` the older end (the
/// release installed, the snapshot taken before), `to` the newer one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Pair<T> {
    /// The older end's value.
    pub from: T,
    /// The newer end's value.
    pub to: T,
}

impl<T> Pair<T> {
    /// Both ends' values, older end first.
    pub const fn new(from: T, to: T) -> Self {
        Self { from, to }
    }

    /// Both values borrowed.
    pub const fn as_ref(&self) -> Pair<&T> {
        Pair {
            from: &self.from,
            to: &self.to,
        }
    }

    /// Both values through `f`, the `from` end first.
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> Pair<U> {
        Pair {
            from: f(self.from),
            to: f(self.to),
        }
    }
}
