! dlb_sendrecv_f.f90: the Fortran form of dlb_sendrecv.c (DLB's Fortran
! interfaces: include 'dlbf.h' and 'dlbf_talp.h' of a DLB prefix, -ldlb),
! popmon's validation program for `popmon dlb-home`.
! Usage: dlb_sendrecv_f [K_MS]   default 200; one repetition, 2 ranks.
! Expected as dlb_sendrecv.c with R = 1: Global elapsed 4K, useful 5K,
! MPI 3K, numMpiCalls 10 (MPI_Init, MPI_Comm_rank, MPI_Finalize, 2 each),
! region "After": 2 measurements. Rank 0 prints "ok lend -17".
program dlb_sendrecv_f
  use mpi
  use iso_c_binding
  implicit none
  include 'dlbf.h'
  include 'dlbf_talp.h'
  integer :: rank, ierr, dummy, e, lend, stat(MPI_STATUS_SIZE)
  double precision :: k
  character(len=32) :: arg
  type(c_ptr) :: after
  k = 0.2d0
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) k
    k = k / 1000d0
  end if
  dummy = 42
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  after = dlb_monitoringregionregister(c_char_"After"//c_null_char)
  if (rank == 0) then
    call busy(2*k)
    e = dlb_monitoringregionstart(after)
    call MPI_Send(dummy, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
    call MPI_Recv(dummy, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, stat, ierr)
    e = dlb_monitoringregionstop(after)
  else
    call busy(k)
    e = dlb_monitoringregionstart(after)
    call MPI_Recv(dummy, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, stat, ierr)
    call busy(2*k)
    call MPI_Send(dummy, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
    e = dlb_monitoringregionstop(after)
  end if
  lend = dlb_lend()
  if (rank == 0) print '(a,i0)', 'ok lend ', lend
  call MPI_Finalize(ierr)
contains
  subroutine busy(s)
    double precision, intent(in) :: s
    double precision :: t0
    integer(8) :: x
    t0 = MPI_Wtime()
    x = 0
    do while (MPI_Wtime() - t0 < s)
      x = x + 1
    end do
  end subroutine busy
end program dlb_sendrecv_f
