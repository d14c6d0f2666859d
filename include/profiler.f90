! profiler.f90: libprofiler for Fortran, through ISO_C_BINDING. The module
! declares profiler.h's types, constants and functions; profiler.h
! documents them. Compile it with the program that uses it:
!
!     cargo build --release
!     gfortran include/profiler.f90 prog.f90 -Ltarget/release -lprofiler
!
! From Fortran:
!  - a session is a type(c_ptr); prof_profil and prof_sprofil set it;
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
    end interface

    interface
        function c_strlen(text) bind(c, name="strlen")
            import :: c_ptr, c_size_t
            type(c_ptr), value :: text
            integer(c_size_t) :: c_strlen
        end function c_strlen
    end interface

contains

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
