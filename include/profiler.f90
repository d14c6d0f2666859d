! profiler.f90: libprofiler for Fortran, through ISO_C_BINDING. The module
! declares profiler.h's types, constants and functions; profiler.h
! documents them. Compile it with the program that uses it:
!
!     cargo build --release
!     gfortran include/profiler.f90 prog.f90 -Ltarget/release -lprofiler
!
! From Fortran:
!  - a session is a type(c_ptr); prof_profil and prof_sprofil set it; so
!    is a set of counters (prof_counters_create and the others set it);
!  - prof_counters_names(out, names, scope) makes a set from a Fortran
!    array of event names, ["task-clock ", "page-faults"] (trailing blanks
!    are dropped); prof_counters_create itself takes an array of C
!    pointers to NUL-terminated names;
!  - an overflow or error handler is a bind(c) procedure passed as
!    c_funloc(handler); an overflow handler runs in a signal handler, so
!    it may only store to memory and call the async-signal-safe functions;
!  - prof_counters_stop's values may be left out (NULL in C);
!  - strings passed in end with c_null_char: "cpu-clock"//c_null_char;
!  - Fortran has no unsigned integers: prof_region%scale and the bucket
!    buffers are signed kinds of the same size (a 16-bit bucket above 32767
!    reads negative; use PROF_BUCKET_32 or _64 where counts grow large);
!  - prof_message(code) is prof_strerror(code) as a Fortran string.
module profiler
    use, intrinsic :: iso_c_binding
    implicit none

    ! Flags: PAPI's values.
    integer(c_int), parameter :: PROF_POSIX = 0
    integer(c_int), parameter :: PROF_RANDOM = 1
    integer(c_int), parameter :: PROF_WEIGHTED = 2
    integer(c_int), parameter :: PROF_COMPRESS = 4
    integer(c_int), parameter :: PROF_BUCKET_16 = 8
    integer(c_int), parameter :: PROF_BUCKET_32 = 16
    integer(c_int), parameter :: PROF_BUCKET_64 = 32
    integer(c_int), parameter :: PROF_FORCE_SW = 64

    ! prof_overflow's flag, and the scopes of a set of counters.
    integer(c_int), parameter :: PROF_OVERFLOW_FORCE_SW = 64
    integer(c_int), parameter :: PROF_SCOPE_THREAD = 0
    integer(c_int), parameter :: PROF_SCOPE_INHERIT = 1
    integer(c_int), parameter :: PROF_SCOPE_PROCESS = 2

    ! Return codes: PAPI's values.
    integer(c_int), parameter :: PROF_OK = 0
    integer(c_int), parameter :: PROF_EINVAL = -1
    integer(c_int), parameter :: PROF_ESYS = -3
    integer(c_int), parameter :: PROF_EBUG = -6
    integer(c_int), parameter :: PROF_ENOEVNT = -7
    integer(c_int), parameter :: PROF_ESTATE = -10
    integer(c_int), parameter :: PROF_EPERM = -15
    integer(c_int), parameter :: PROF_ENOSUPP = -18

    type, bind(c) :: prof_region
        type(c_ptr) :: buf = c_null_ptr
        integer(c_size_t) :: bufsiz = 0
        integer(c_intptr_t) :: offset = 0
        integer(c_int) :: scale = 0
    end type prof_region

    type, bind(c) :: prof_stats
        integer(c_int64_t) :: samples = 0
        integer(c_int64_t) :: outside = 0
        integer(c_int64_t) :: saturated = 0
        integer(c_int64_t) :: lost = 0
    end type prof_stats

    type, bind(c) :: prof_encoding
        integer(c_int32_t) :: type = 0
        integer(c_int64_t) :: config = 0
        integer(c_int64_t) :: config1 = 0
        integer(c_int64_t) :: config2 = 0
        integer(c_int) :: exclude_user = 0
        integer(c_int) :: exclude_kernel = 0
        integer(c_int) :: exclude_hv = 0
        integer(c_int) :: precise_ip = 0
    end type prof_encoding

    type, bind(c) :: prof_count
        integer(c_long_long) :: value = 0
        integer(c_long_long) :: raw = 0
        integer(c_int64_t) :: time_enabled = 0
        integer(c_int64_t) :: time_running = 0
    end type prof_count

    interface
        integer(c_int) function prof_profil(out, buf, bufsiz, offset, scale, event, threshold, &
                                            flags) bind(c, name="prof_profil")
            import :: c_int, c_ptr, c_size_t, c_intptr_t, c_char, c_long_long
            type(c_ptr), intent(out) :: out
            type(c_ptr), value :: buf
            integer(c_size_t), value :: bufsiz
            integer(c_intptr_t), value :: offset
            integer(c_int), value :: scale
            character(kind=c_char), dimension(*), intent(in) :: event
            integer(c_long_long), value :: threshold
            integer(c_int), value :: flags
        end function prof_profil

        integer(c_int) function prof_sprofil(out, regions, count, event, threshold, flags) &
            bind(c, name="prof_sprofil")
            import :: c_int, c_ptr, c_char, c_long_long, prof_region
            type(c_ptr), intent(out) :: out
            type(prof_region), dimension(*), intent(in) :: regions
            integer(c_int), value :: count
            character(kind=c_char), dimension(*), intent(in) :: event
            integer(c_long_long), value :: threshold
            integer(c_int), value :: flags
        end function prof_sprofil

        integer(c_int) function prof_start(s) bind(c, name="prof_start")
            import :: c_int, c_ptr
            type(c_ptr), value :: s
        end function prof_start

        integer(c_int) function prof_read(s) bind(c, name="prof_read")
            import :: c_int, c_ptr
            type(c_ptr), value :: s
        end function prof_read

        integer(c_int) function prof_stop(s) bind(c, name="prof_stop")
            import :: c_int, c_ptr
            type(c_ptr), value :: s
        end function prof_stop

        integer(c_int) function prof_get_stats(s, out) bind(c, name="prof_get_stats")
            import :: c_int, c_ptr, prof_stats
            type(c_ptr), value :: s
            type(prof_stats), intent(out) :: out
        end function prof_get_stats

        ! name: "gmon.out"//c_null_char, or another name so ended; in a
        ! rank of an MPI job the rank is added (profiler.h says how).
        integer(c_int) function prof_save(s, name) bind(c, name="prof_save")
            import :: c_int, c_ptr, c_char
            type(c_ptr), value :: s
            character(kind=c_char), dimension(*), intent(in) :: name
        end function prof_save

        subroutine prof_free(s) bind(c, name="prof_free")
            import :: c_ptr
            type(c_ptr), value :: s
        end subroutine prof_free

        type(c_ptr) function prof_strerror(code) bind(c, name="prof_strerror")
            import :: c_ptr, c_int
            integer(c_int), value :: code
        end function prof_strerror

        integer(c_int) function prof_event_encode(event, out) bind(c, name="prof_event_encode")
            import :: c_int, c_char, prof_encoding
            character(kind=c_char), dimension(*), intent(in) :: event
            type(prof_encoding), intent(out) :: out
        end function prof_event_encode

        integer(c_int) function prof_counters_create(out, events, count, scope) &
            bind(c, name="prof_counters_create")
            import :: c_int, c_ptr
            type(c_ptr), intent(out) :: out
            type(c_ptr), dimension(*), intent(in) :: events
            integer(c_int), value :: count
            integer(c_int), value :: scope
        end function prof_counters_create

        integer(c_int) function prof_counters_attach(out, events, count, pid) &
            bind(c, name="prof_counters_attach")
            import :: c_int, c_ptr
            type(c_ptr), intent(out) :: out
            type(c_ptr), dimension(*), intent(in) :: events
            integer(c_int), value :: count
            integer(c_int), value :: pid
        end function prof_counters_attach

        integer(c_int) function prof_counters_cpu(out, events, count, cpu) &
            bind(c, name="prof_counters_cpu")
            import :: c_int, c_ptr
            type(c_ptr), intent(out) :: out
            type(c_ptr), dimension(*), intent(in) :: events
            integer(c_int), value :: count
            integer(c_int), value :: cpu
        end function prof_counters_cpu

        integer(c_int) function prof_counters_start(c) bind(c, name="prof_counters_start")
            import :: c_int, c_ptr
            type(c_ptr), value :: c
        end function prof_counters_start

        integer(c_int) function prof_counters_read(c, values) bind(c, name="prof_counters_read")
            import :: c_int, c_ptr, c_long_long
            type(c_ptr), value :: c
            integer(c_long_long), dimension(*), intent(out) :: values
        end function prof_counters_read

        integer(c_int) function prof_counters_read_ext(c, values) &
            bind(c, name="prof_counters_read_ext")
            import :: c_int, c_ptr, prof_count
            type(c_ptr), value :: c
            type(prof_count), dimension(*), intent(inout) :: values
        end function prof_counters_read_ext

        integer(c_int) function prof_counters_accum(c, values) bind(c, name="prof_counters_accum")
            import :: c_int, c_ptr, c_long_long
            type(c_ptr), value :: c
            integer(c_long_long), dimension(*), intent(inout) :: values
        end function prof_counters_accum

        integer(c_int) function prof_counters_reset(c) bind(c, name="prof_counters_reset")
            import :: c_int, c_ptr
            type(c_ptr), value :: c
        end function prof_counters_reset

        integer(c_int) function prof_counters_stop(c, values) bind(c, name="prof_counters_stop")
            import :: c_int, c_ptr, c_long_long
            type(c_ptr), value :: c
            integer(c_long_long), dimension(*), intent(out), optional :: values
        end function prof_counters_stop

        subroutine prof_counters_free(c) bind(c, name="prof_counters_free")
            import :: c_ptr
            type(c_ptr), value :: c
        end subroutine prof_counters_free

        integer(c_int) function prof_overflow(c, index, threshold, flags, handler) &
            bind(c, name="prof_overflow")
            import :: c_int, c_ptr, c_long_long, c_funptr
            type(c_ptr), value :: c
            integer(c_int), value :: index
            integer(c_long_long), value :: threshold
            integer(c_int), value :: flags
            type(c_funptr), value :: handler
        end function prof_overflow

        subroutine prof_set_error_handler(handler) bind(c, name="prof_set_error_handler")
            import :: c_funptr
            type(c_funptr), value :: handler
        end subroutine prof_set_error_handler
    end interface

    interface
        function c_strlen(text) bind(c, name="strlen")
            import :: c_ptr, c_size_t
            type(c_ptr), value :: text
            integer(c_size_t) :: c_strlen
        end function c_strlen
    end interface

contains

    ! prof_counters_create with a Fortran array of event names.
    function prof_counters_names(out, names, scope) result(rc)
        type(c_ptr), intent(out) :: out
        character(len=*), dimension(:), intent(in) :: names
        integer(c_int), intent(in) :: scope
        integer(c_int) :: rc
        character(kind=c_char, len=len(names) + 1), allocatable, target :: text(:)
        type(c_ptr), allocatable :: events(:)
        integer :: i

        allocate (text(size(names)), events(size(names)))
        do i = 1, size(names)
            text(i) = trim(names(i))//c_null_char
            events(i) = c_loc(text(i))
        end do
        rc = prof_counters_create(out, events, int(size(names), c_int), scope)
    end function prof_counters_names

    ! prof_strerror(code), as a Fortran string.
    function prof_message(code) result(message)
        integer(c_int), intent(in) :: code
        character(len=:), allocatable :: message
        type(c_ptr) :: text
        character(kind=c_char), pointer :: chars(:)
        integer :: i, length

        text = prof_strerror(code)
        length = int(c_strlen(text))
        call c_f_pointer(text, chars, [length])
        allocate (character(len=length) :: message)
        do i = 1, length
            message(i:i) = chars(i)
        end do
    end function prof_message

end module profiler
