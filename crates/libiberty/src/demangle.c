/* GNU libiberty's C++ demangler, with the options c++filt -i uses:
 * DMGL_ANSI (const, volatile and the rest), DMGL_PARAMS where argument
 * lists are wanted, and not DMGL_VERBOSE (std::string stays short). */

#include <stdlib.h>
#include <demangle.h>

char *profiler_cplus_demangle(const char *mangled, int params) {
  return cplus_demangle(mangled, DMGL_ANSI | (params ? DMGL_PARAMS : 0));
}

void profiler_cplus_demangle_free(char *text) { free(text); }
