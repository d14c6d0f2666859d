//! GNU libiberty's C++ demangler, the one c++filt, gdb and perf use, where
//! the system has it: the symbolizer (`profiler-symbols`) asks here first,
//! and demangles C++ names itself where this crate has none.
//!
//! The build script looks for libiberty's `demangle.h` and `libiberty.a`
//! (Debian and Ubuntu: `apt-get install libiberty-dev`) and links them
//! where it finds both; elsewhere, or with `PROFILER_NO_LIBIBERTY=1` at
//! build time, [`PRESENT`] is false and [`demangle`] answers `None`.
//!
//! ```
//! let name = profiler_libiberty::demangle("_ZN3foo3Bar4burnEi", false);
//! if profiler_libiberty::PRESENT {
//!     assert_eq!(name.as_deref(), Some("foo::Bar::burn"));
//! } else {
//!     assert_eq!(name, None);
//! }
//! ```
//!
//! This is the one place outside the sampler, the C library and the
//! symbols crate's memory map where the profiler calls C: the call and its
//! one `unsafe` block sit here, beside what they rely on.

/// Whether this build has libiberty's demangler.
pub const PRESENT: bool = cfg!(libiberty);

/// `mangled` demangled by libiberty as `c++filt -i` spells it, or as
/// `c++filt -i -p` without `params`; `None` for a name it cannot demangle,
/// one that holds a NUL, and in a build without libiberty.
pub fn demangle(mangled: &str, params: bool) -> Option<String> {
    #[cfg(libiberty)]
    {
        gnu::demangle(mangled, params)
    }
    #[cfg(not(libiberty))]
    {
        let _ = (mangled, params);
        None
    }
}

#[cfg(libiberty)]
#[allow(unsafe_code)]
mod gnu {
    use std::ffi::{CStr, CString, c_char, c_int};

    unsafe extern "C" {
        /// `cplus_demangle(mangled, DMGL_ANSI | DMGL_PARAMS if params)`:
        /// a string from malloc, or null.
        fn profiler_cplus_demangle(mangled: *const c_char, params: c_int) -> *mut c_char;
        /// `free(text)`.
        fn profiler_cplus_demangle_free(text: *mut c_char);
    }

    pub(crate) fn demangle(mangled: &str, params: bool) -> Option<String> {
        let mangled = CString::new(mangled).ok()?;
        // SAFETY: `mangled` is a NUL-terminated string that outlives the
        // call, which only reads it; libiberty's v3 demangler keeps no
        // state between calls, so threads may call it at once. What it
        // returns is null or a NUL-terminated string from malloc that the
        // caller owns: it is read before it is freed, and freed once.
        unsafe {
            let text = profiler_cplus_demangle(mangled.as_ptr(), c_int::from(params));
            if text.is_null() {
                return None;
            }
            let demangled = CStr::from_ptr(text).to_str().ok().map(str::to_owned);
            profiler_cplus_demangle_free(text);
            demangled
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn demangles_where_present() {
        let full = super::demangle("_ZNK3foo3Bar4sizeEv", true);
        let short = super::demangle("_ZNK3foo3Bar4sizeEv", false);
        if super::PRESENT {
            assert_eq!(full.as_deref(), Some("foo::Bar::size() const"));
            assert_eq!(short.as_deref(), Some("foo::Bar::size"));
            assert_eq!(super::demangle("_Zinvalid", true), None);
            assert_eq!(super::demangle("_ZN3foo\0", true), None);
        } else {
            assert_eq!((full, short), (None, None));
        }
    }
}
