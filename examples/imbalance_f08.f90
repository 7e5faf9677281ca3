! imbalance_f08.f90: the load-imbalance demo with the Fortran 2008 bindings
! (`use mpi_f08`: derived-type handles, optional IERROR, choice buffers of
! assumed type and rank), whose procedures the MPI libraries export under
! their own names (mpi_x_f08_ in Open MPI and MPICH, mpi_x_f08ts_ for choice
! buffers in MPICH). Also MPI_IN_PLACE, MPI_STATUS_IGNORE, MPI_PROC_NULL and
! a character argument (MPI_Get_processor_name).
!
! Usage: imbalance_f08 [K_MS [ITERATIONS]]   defaults: K = 50 ms, N = 5
!                                            (wall time N*P*K: 1.0 s for P = 4)
!
! Rank r (0-based) works (r+1)*K per iteration (a nanosleep through
! ISO_C_BINDING), sends its rank to rank r+1 and receives rank r-1's
! (MPI_Sendrecv along the chain, MPI_PROC_NULL at its ends), then all ranks
! meet in MPI_Allreduce(MPI_IN_PLACE, ...), without IERROR. With P ranks (one
! CPU each), N iterations (POP-METRICS.md section 2, model talp), exactly as
! imbalance.c:
!   Load balance             = mean U / max U   = (P+1)/(2P)
!   Communication efficiency = 1
!   Parallel efficiency      = (P+1)/(2P)
!   P = 2: 0.75        P = 4: 0.625
!
! Rank 0 prints "ok <checksum>", checksum = P(P+1)/2 * N(N+1)/2, the same with
! and without popmon; a wrong value prints "FAIL ..." and exits with status 1.
program imbalance_f08
  use, intrinsic :: iso_c_binding, only: c_int, c_long
  use, intrinsic :: iso_fortran_env, only: error_unit, int64
  use mpi_f08
  implicit none

  type, bind(c) :: timespec
    integer(c_long) :: tv_sec
    integer(c_long) :: tv_nsec
  end type timespec

  interface
    function clock_nanosleep(clockid, flags, req, rem) bind(c, name='clock_nanosleep') result(rc)
      import :: c_int, timespec
      integer(c_int), value :: clockid, flags
      type(timespec), intent(in) :: req
      type(timespec), intent(out) :: rem
      integer(c_int) :: rc
    end function clock_nanosleep
  end interface

  integer :: ierr, rank, nprocs, it, n, left, right, from_left, good, namelen
  integer :: x(3), all_good(1)
  integer(int64) :: checksum, expected
  double precision :: k
  character(len=MPI_MAX_PROCESSOR_NAME) :: host

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  k = 50d0
  n = 5
  if (.not. read_args(k, n)) then
    if (rank == 0) write (error_unit, '(a)') 'usage: imbalance_f08 [K_MS [ITERATIONS]]'
    call MPI_Finalize()
    stop 2
  end if

  good = 1
  call MPI_Get_processor_name(host, namelen, ierr)
  call check(ierr == MPI_SUCCESS .and. namelen > 0 .and. namelen <= len(host), 'MPI_Get_processor_name')
  left = rank - 1
  right = rank + 1
  if (rank == 0) left = MPI_PROC_NULL
  if (rank == nprocs - 1) right = MPI_PROC_NULL

  checksum = 0
  do it = 1, n
    call work_ms(dble(rank + 1) * k)

    from_left = -7   ! a receive from MPI_PROC_NULL leaves it unchanged
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, it, from_left, 1, MPI_INTEGER, left, it, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(from_left == merge(-7, rank - 1, rank == 0), 'MPI_Sendrecv(MPI_STATUS_IGNORE)')

    x(1) = rank + 1
    x(2) = (rank + 1) * it
    x(3) = rank
    call MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(x(1) == nprocs * (nprocs + 1) / 2 .and. x(3) == nprocs * (nprocs - 1) / 2, &
               'MPI_Allreduce(MPI_IN_PLACE)')
    checksum = checksum + x(2)
  end do

  all_good(1) = good
  call MPI_Allreduce(MPI_IN_PLACE, all_good, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  expected = int(nprocs, int64) * (nprocs + 1) / 2 * n * (n + 1) / 2
  if (all_good(1) == 1 .and. checksum == expected) then
    if (rank == 0) write (*, '(a,i0)') 'ok ', checksum
  else if (rank == 0) then
    write (error_unit, '(a,i0,a,i0)') 'FAIL checksum ', checksum, ' expected ', expected
  end if
  call MPI_Finalize(ierr)
  if (all_good(1) /= 1 .or. checksum /= expected) stop 1

contains

  ! Useful work: sleeps ms milliseconds (relative CLOCK_MONOTONIC sleep,
  ! resumed with the remaining time on EINTR).
  subroutine work_ms(ms)
    double precision, intent(in) :: ms
    integer(c_int), parameter :: CLOCK_MONOTONIC = 1, EINTR = 4
    integer(c_long) :: ns
    type(timespec) :: req, rem
    ns = nint(ms * 1d6, c_long)
    req%tv_sec = ns / 1000000000_c_long
    req%tv_nsec = mod(ns, 1000000000_c_long)
    do while (clock_nanosleep(CLOCK_MONOTONIC, 0_c_int, req, rem) == EINTR)
      req = rem
    end do
  end subroutine work_ms

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(*), intent(in) :: what
    if (.not. cond) then
      write (error_unit, '(a,i0,2a)') 'FAIL rank ', rank, ': wrong result of ', what
      good = 0
    end if
  end subroutine check

  ! Reads the optional arguments K_MS (> 0) and ITERATIONS (>= 1).
  logical function read_args(kms, iters)
    double precision, intent(inout) :: kms
    integer, intent(inout) :: iters
    character(len=64) :: buf
    integer :: ios
    read_args = .false.
    if (command_argument_count() > 2) return
    if (command_argument_count() >= 1) then
      call get_command_argument(1, buf)
      read (buf, *, iostat=ios) kms
      if (ios /= 0 .or. .not. (kms > 0d0)) return
    end if
    if (command_argument_count() >= 2) then
      call get_command_argument(2, buf)
      read (buf, *, iostat=ios) iters
      if (ios /= 0 .or. iters < 1) return
    end if
    read_args = .true.
  end function read_args

end program imbalance_f08
