//! Symbol names as people write them: Rust (legacy and v0) without the hash
//! suffix, C++ without the argument list.
//!
//! C++ names are spelled as `c++filt -i` spells them (`std::string`, as
//! perf and gdb print it), or `c++filt -i -p` without argument lists:
//! cpp_demangle reads them, its output respelled where it differs from GNU
//! libiberty's, the demangler of c++filt, gdb and perf (`respell`), and
//! names it misreads read again (`reread`). `docs/demangling.md` lists the
//! names of libstdc++ and libLLVM on which the two still differ.

mod reread;
mod respell;

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
    if name.starts_with("_Z")
        && name.is_ascii()
        && let Some(text) = reread::demangle(name, full_signatures)
    {
        return text;
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
        for (name, short) in [
            ("_ZN3foo3Bar4burnEi", "foo::Bar::burn"),
            ("_Z4workIiEvT_", "work<int>"),
            ("_ZNK3foo3Bar4sizeEv", "foo::Bar::size"),
            ("_ZNKSs4findEcm", "std::string::find"),
        ] {
            assert_eq!(demangle(name, false), short, "{name}");
        }
    }

    #[test]
    fn cpp_names_read_as_cxxfilt_prints_them() {
        for (name, full) in [
            // An empty parameter pack.
            (
                "_ZN4llvm15AnalysisManagerINS_8FunctionEJEE5clearEv",
                "llvm::AnalysisManager<llvm::Function>::clear()",
            ),
            // A constructor template of a class named by abbreviation,
            // with a template parameter repeated.
            (
                "_ZNSbIwSt11char_traitsIwESaIwEEC2IPKwEET_S6_RKS1_",
                "std::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >\
                 ::basic_string<wchar_t const*>(wchar_t const*, wchar_t const*, \
                 std::allocator<wchar_t> const&)",
            ),
            // A pack of forwarding references, and an integer argument.
            (
                "_ZN4llvm10AccelTableINS_26DWARF5AccelTableStaticDataEE7addNameIJjNS_5dwarf3TagEj\
                 EEEvNS_23DwarfStringPoolEntryRefEDpOT_",
                "void llvm::AccelTable<llvm::DWARF5AccelTableStaticData>::addName<unsigned int, \
                 llvm::dwarf::Tag, unsigned int>(llvm::DwarfStringPoolEntryRef, unsigned int&&, \
                 llvm::dwarf::Tag&&, unsigned int&&)",
            ),
            (
                "_ZN4llvm11SmallVectorIiLj4EED2Ev",
                "llvm::SmallVector<int, 4u>::~SmallVector()",
            ),
            ("_ZTVSt9bad_alloc", "vtable for std::bad_alloc"),
            (
                "_ZThn8_NSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEED1Ev",
                "non-virtual thunk to std::__cxx11::basic_stringstream<char, \
                 std::char_traits<char>, std::allocator<char> >::~basic_stringstream()",
            ),
            ("_ZNKSi6gcountEv", "std::istream::gcount() const"),
            (
                "_ZNSoC1EPSt15basic_streambufIcSt11char_traitsIcEE",
                "std::basic_ostream<char, std::char_traits<char> >::basic_ostream(\
                 std::basic_streambuf<char, std::char_traits<char> >*)",
            ),
        ] {
            assert_eq!(demangle(name, true), full, "{name}");
        }
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
        for name in ["main", "_Zinvalid", "hot_loop.cold", "_ZN3foo\u{e9}E"] {
            assert_eq!(demangle(name, false), name);
        }
    }
}
