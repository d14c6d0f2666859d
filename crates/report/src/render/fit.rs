//! Fitting text rows to a width: a terminal's, or 100 columns where the
//! output is not one. Names give way first where they are least telling:
//! C++ and Rust template arguments, the longest first (`std::map<..>::find`),
//! then the middle of the name, so that its start and its base name (the
//! end) stay readable, as `ps` cuts its command column, but in the middle.

/// How wide a text view's rows may be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RowWidth {
    /// As wide as their cells are (`--wide`).
    #[default]
    Unlimited,
    /// At most this many columns.
    Columns(usize),
}

/// What stands for elided text.
const ELLIPSIS: &str = "..";

/// The fewest columns a name is cut to, however little room a row leaves.
pub(crate) const MIN_NAME: usize = 10;

impl RowWidth {
    /// The room left for a cell after `used` columns, if rows are limited.
    pub(crate) fn room_after(self, used: usize) -> Option<usize> {
        match self {
            RowWidth::Unlimited => None,
            RowWidth::Columns(columns) => Some(columns.saturating_sub(used).max(MIN_NAME)),
        }
    }
}

/// The width of `text` in columns (a character each).
pub(crate) fn columns(text: &str) -> usize {
    text.chars().count()
}

/// `name` in at most `room` columns: template arguments elided, the
/// longest first, as far as needed, then the middle.
pub(crate) fn fit_name(name: &str, room: usize) -> String {
    if columns(name) <= room {
        return name.to_owned();
    }
    let name = elide_templates(name, room);
    elide_middle(&name, room)
}

/// `name` with the arguments of template argument lists (`<...>`, not
/// operators such as `operator<`) replaced by `..` until it fits in `room`
/// columns or none is left: the deepest lists first (`Vec<T,A>` inside
/// `<Vec<T,A> as Extend<&T>>`), the longest first at each depth.
pub(crate) fn elide_templates(name: &str, room: usize) -> String {
    let lists = template_lists(name);
    let deepest = lists.iter().map(|list| list.depth).max().unwrap_or(0);
    let mut elided: Vec<(usize, usize)> = Vec::new();
    let mut text = name.to_owned();
    for depth in (1..=deepest).rev() {
        let mut level: Vec<&TemplateList> = (lists.iter())
            .filter(|list| list.depth == depth && list.end - list.start > ELLIPSIS.len())
            .collect();
        level.sort_by(|a, b| {
            (b.end - b.start)
                .cmp(&(a.end - a.start))
                .then(b.start.cmp(&a.start))
        });
        for list in level {
            if columns(&text) <= room {
                return text;
            }
            // A list inside one elided already is gone with it; one around
            // lists elided already takes their place.
            if elided
                .iter()
                .any(|&(start, end)| start <= list.start && list.end <= end)
            {
                continue;
            }
            elided.retain(|&(start, end)| !(list.start <= start && end <= list.end));
            elided.push((list.start, list.end));
            text = with_elided(name, &elided);
        }
    }
    text
}

/// The inside of a template argument list: bytes `start..end` of a name,
/// between its `<` and `>`, `depth` lists deep (1 for the outermost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TemplateList {
    start: usize,
    end: usize,
    depth: usize,
}

/// `name` with the byte ranges `elided` (inside `<...>`) replaced by `..`.
fn with_elided(name: &str, elided: &[(usize, usize)]) -> String {
    let mut ranges = elided.to_vec();
    ranges.sort_unstable();
    let mut text = String::with_capacity(name.len());
    let mut at = 0;
    for (start, end) in ranges {
        text.push_str(&name[at..start]);
        text.push_str(ELLIPSIS);
        at = end;
    }
    text.push_str(&name[at..]);
    text
}

/// The template argument lists of `name`, at every depth.
fn template_lists(name: &str) -> Vec<TemplateList> {
    let bytes = name.as_bytes();
    let mut lists = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        // `operator<`, `operator<<=`, `operator->`, `operator>>`: not lists.
        if bytes[at..].starts_with(b"operator") {
            at += "operator".len();
            while at < bytes.len() && b"<>=-".contains(&bytes[at]) {
                at += 1;
            }
            continue;
        }
        match bytes[at] {
            b'<' => open.push(at + 1),
            b'>' => {
                if let Some(start) = open.pop() {
                    lists.push(TemplateList {
                        start,
                        end: at,
                        depth: open.len() + 1,
                    });
                }
            }
            _ => {}
        }
        at += 1;
    }
    lists
}

/// `text` in at most `room` columns, its middle replaced by `..`: a third
/// of what is kept from its start, two thirds from its end.
pub(crate) fn elide_middle(text: &str, room: usize) -> String {
    let length = columns(text);
    if length <= room {
        return text.to_owned();
    }
    let kept = room.saturating_sub(ELLIPSIS.len());
    let head = kept / 3;
    let tail = kept - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(length - tail).collect();
    // Not three dots or more, where the cut meets an elided list.
    let (start, end) = (start.trim_end_matches('.'), end.trim_start_matches('.'));
    format!("{start}{ELLIPSIS}{end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_arguments_go_first_the_deepest_and_longest_first() {
        let name = "std::_Hashtable<std::string, std::pair<std::string const, int>>::find<int>";
        assert_eq!(elide_templates(name, 200), name);
        assert_eq!(
            elide_templates(name, 60),
            "std::_Hashtable<std::string, std::pair<..>>::find<int>"
        );
        assert_eq!(elide_templates(name, 40), "std::_Hashtable<..>::find<int>");
        assert_eq!(elide_templates(name, 20), "std::_Hashtable<..>::find<..>");
        let fitted = fit_name(name, 22);
        assert_eq!(fitted, elide_middle("std::_Hashtable<..>::find<..>", 22));
        assert!(fitted.ends_with("::find<..>"), "{fitted}");
        let rust = "<alloc::vec::Vec<T,A> as core::iter::traits::collect::Extend<&T>>::extend";
        assert_eq!(
            elide_templates(rust, 72),
            "<alloc::vec::Vec<..> as core::iter::traits::collect::Extend<&T>>::extend"
        );
        assert_eq!(elide_templates(rust, 20), "<..>::extend");
    }

    fn starts_of(name: &str) -> Vec<(usize, usize)> {
        template_lists(name)
            .iter()
            .map(|l| (l.start, l.end))
            .collect()
    }

    #[test]
    fn operators_are_not_template_lists() {
        let starts = starts_of;
        assert_eq!(starts("operator<"), []);
        assert_eq!(starts("Foo<int>::operator<<(int)"), [(4, 7)]);
        assert_eq!(starts("operator< <Bar>"), [(11, 14)]);
        assert_eq!(elide_templates("a::operator<=>", 3), "a::operator<=>");
    }

    #[test]
    fn names_beyond_ascii_are_cut_between_characters() {
        let name = "f\u{fffd}\u{fffd}<\u{e9}t\u{e9}>::g\u{fffd}operator<\u{fffd}>";
        assert_eq!(starts_of(name), [(8, 13)]);
        let fitted = fit_name(name, 8);
        assert!(fitted.chars().count() <= 8, "{fitted}");
    }

    #[test]
    fn the_middle_goes_and_the_base_name_stays() {
        let name = "very::long::namespace::path::to::the_function";
        let fitted = elide_middle(name, 24);
        assert_eq!(columns(&fitted), 24);
        assert!(fitted.starts_with("very::"), "{fitted}");
        assert!(fitted.ends_with("::the_function"), "{fitted}");
        assert_eq!(elide_middle("short", 24), "short");
        assert_eq!(elide_middle("Widget<..>::burn", 12), "Wid..>::burn");
    }

    #[test]
    fn rows_without_a_limit_take_all_the_room_they_need() {
        assert_eq!(RowWidth::Unlimited.room_after(90), None);
        assert_eq!(RowWidth::Columns(100).room_after(60), Some(40));
        assert_eq!(RowWidth::Columns(100).room_after(95), Some(MIN_NAME));
        assert_eq!(RowWidth::Columns(80).room_after(69), Some(11));
    }
}
