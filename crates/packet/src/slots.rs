//! Values kept in numbered slots, a freed slot reused first (last in,
//! first out, so the slots in use stay few and in cache): the event slab
//! of `engine/events.rs` and the whole packets of `packet::Packer`.

/// Values of type `T` in slots named by `u32`.
#[derive(Debug)]
pub(crate) struct Slots<T> {
    /// Every slot made; a free one holds a spent value.
    items: Vec<T>,
    /// Free slots, the most recently freed last.
    free: Vec<u32>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            items: vec![],
            free: vec![],
        }
    }
}

impl<T: Copy> Slots<T> {
    /// Keeps `x` in a slot, the last freed if any, and names it.
    #[inline]
    pub(crate) fn insert(&mut self, x: T) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.items[s as usize] = x;
                s
            }
            None => {
                self.items.push(x);
                u32::try_from(self.items.len() - 1).expect("fewer than 2^32 slots")
            }
        }
    }

    /// The value in slot `s`.
    #[inline]
    pub(crate) fn get(&self, s: u32) -> &T {
        &self.items[s as usize]
    }

    /// The value in slot `s`, the slot freed.
    #[inline]
    pub(crate) fn remove(&mut self, s: u32) -> T {
        self.free.push(s);
        self.items[s as usize]
    }

    /// Slots in use.
    #[cfg(test)]
    pub(crate) fn in_use(&self) -> usize {
        self.items.len() - self.free.len()
    }

    /// Slots ever made.
    #[cfg(test)]
    pub(crate) fn made(&self) -> usize {
        self.items.len()
    }
}
