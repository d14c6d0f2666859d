//! Symbol names as people write them: Rust (legacy and v0) without the hash
//! suffix, C++ without the argument list.
//!
//! C++ names are demangled by GNU libiberty, the demangler of c++filt, gdb
//! and perf, so that names agree with theirs to the letter: spelled as
//! `c++filt -i` spells them (`std::string`, as perf and gdb print it), or
//! `c++filt -i -p` without argument lists.

use std::fmt::Write;

/// Demangles `name` if it is a Rust or C++ symbol; returns it unchanged
/// otherwise. C++ names lose their argument lists unless `full_signatures`.
pub fn demangle(name: &str, full_signatures: bool) -> String {
    if let Ok(rust) = rustc_demangle::try_demangle(name) {
        // The alternate form drops the `::h0123456789abcdef` hash. The
        // demangler writes a piece at a time: a name seldom outgrows its
        // mangled form, which saves the string growing at each.
        let mut text = String::with_capacity(name.len());
        let _ = write!(text, "{rust:#}");
        return text;
    }
    // Mangled names are ASCII; anything else is left alone rather than
    // risk text that is not UTF-8 coming back.
    if name.starts_with("_Z") && name.is_ascii() {
        let options = cplus_demangle::Options {
            show_params: full_signatures,
            show_ansi: true,
        };
        if let Ok(text) = cplus_demangle::demangle_with_options(name, options) {
            return text;
        }
    }
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn rust_legacy_names_lose_their_hash() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h6c5a8bbf1a1e8a6dE", false),
            "core::fmt::write"
        );
    }

    #[test]
    fn rust_v0_names_are_demangled() {
        assert_eq!(demangle("_RNvCs1234_7mycrate4burn", false), "mycrate::burn");
        assert_eq!(
            demangle("_RNvMNtCs1234_7mycrate5shapeNtB2_6Circle4area", false),
            "<mycrate::shape::Circle>::area"
        );
    }

    #[test]
    fn cpp_names_lose_their_argument_lists() {
        assert_eq!(demangle("_ZN3foo3Bar4burnEi", false), "foo::Bar::burn");
        assert_eq!(demangle("_Z4workIiEvT_", false), "work<int>");
        assert_eq!(demangle("_ZNK3foo3Bar4sizeEv", false), "foo::Bar::size");
    }

    #[test]
    fn cpp_names_read_as_cxxfilt_prints_them() {
        // An empty parameter pack, and a repeated template parameter.
        assert_eq!(
            demangle("_ZN4llvm15AnalysisManagerINS_8FunctionEJEE5clearEv", true),
            "llvm::AnalysisManager<llvm::Function>::clear()"
        );
        assert_eq!(
            demangle("_ZNSbIwSt11char_traitsIwESaIwEEC2IPKwEET_S6_RKS1_", true),
            "std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >\
             ::basic_string<wchar_t const*>(wchar_t const*, wchar_t const*, \
             std::allocator<wchar_t> const&)"
        );
        assert_eq!(demangle("_ZNKSs4findEcm", false), "std::string::find");
    }

    #[test]
    fn full_signatures_keep_the_argument_list() {
        assert_eq!(demangle("_ZN3foo3Bar4burnEi", true), "foo::Bar::burn(int)");
        assert_eq!(
            demangle("_ZN4core3fmt5write17h6c5a8bbf1a1e8a6dE", true),
            "core::fmt::write"
        );
    }

    #[test]
    fn plain_names_are_left_alone() {
        assert_eq!(demangle("main", false), "main");
        assert_eq!(demangle("_Zinvalid", false), "_Zinvalid");
        assert_eq!(demangle("hot_loop.cold", false), "hot_loop.cold");
    }
}
