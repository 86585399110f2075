//! The mask: what of an envelope is read, per item everything, nothing,
//! or each stream line as error text, as a tool's text or not at all.
//!
//! The provenance judgment (`provenance`) makes it, extraction (`extract`)
//! obeys it. It is a module of its own so that neither of the two depends
//! on the other.

/// How a stream line is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineUse {
    /// As error text (the default).
    Read,
    /// As a tool's text.
    Tool,
    /// Not at all.
    Drop,
}

/// What to read of an envelope: per item, everything, nothing, or its
/// stream lines each in their own way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mask {
    items: Vec<Keep>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Keep {
    All,
    Nothing,
    Lines(Vec<LineUse>),
}

impl Mask {
    pub(crate) fn all(n: usize) -> Mask {
        Mask {
            items: vec![Keep::All; n],
        }
    }

    pub(crate) fn drops_item(&self, item: usize) -> bool {
        matches!(self.items.get(item), Some(Keep::Nothing))
    }

    /// How each line of a stream item is read, when not all as error text.
    pub(crate) fn lines(&self, item: usize) -> Option<&[LineUse]> {
        match self.items.get(item) {
            Some(Keep::Lines(l)) => Some(l),
            _ => None,
        }
    }

    pub(crate) fn drop_item(&mut self, item: usize) {
        self.items[item] = Keep::Nothing;
    }

    pub(crate) fn set_line(&mut self, item: usize, line: usize, lines: usize, how: LineUse) {
        let k = &mut self.items[item];
        if let Keep::All = k {
            *k = Keep::Lines(vec![LineUse::Read; lines]);
        }
        if let Keep::Lines(l) = k {
            if let Some(x) = l.get_mut(line) {
                // Dropping wins over reading as tool text.
                if *x != LineUse::Drop {
                    *x = how;
                }
            }
        }
    }

    pub(crate) fn is_all(&self) -> bool {
        self.items.iter().all(|k| *k == Keep::All)
    }
}
