! regions_f.f90: the popmon region API from Fortran (`use popmon`, module
! source shim/popmon.f90 compiled with the program; nothing to link).
!
! Usage: regions_f [K_MS]                  default: K = 100 ms
!
! Rank r works K inside region "solve" and then (r+1)*K outside it, then all
! ranks meet in MPI_Allreduce (twice). Expected (model talp, P ranks):
!   "solve": 2 visits, elapsed 2*K, LB = 1, PE = 1 (no MPI inside it)
!   Global:  U_r = 2*K + 2*(r+1)*K, T = 2*K + 2*P*K,
!            LB = mean U / max U = (1 + (P+1)/2) / (1 + P) = (P+3)/(2(P+1))
! Rank 0 prints "ok measured" under popmon, "ok" without it.
program regions_f
  use mpi
  use popmon
  use iso_c_binding
  implicit none
  interface
    function usleep(us) bind(c, name='usleep') result(rc)
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: us
      integer(c_int) :: rc
    end function usleep
  end interface
  integer :: ierr, rank, nprocs, it, rc, total, one
  integer(c_int32_t) :: k_us
  character(len=32) :: arg
  type(c_ptr) :: solve

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  k_us = 100000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) k_us
    k_us = k_us * 1000
  end if

  solve = popmon_region_register("solve")
  do it = 1, 2
    rc = popmon_region_start(solve)
    rc = usleep(k_us)
    rc = popmon_region_stop(solve)
    rc = usleep(k_us * (rank + 1))
    one = 1
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  if (rank == 0) then
    if (total /= nprocs) then
      print '(a)', 'wrong sum'
    else if (popmon_measured()) then
      print '(a)', 'ok measured'
    else
      print '(a)', 'ok'
    end if
  end if
  call MPI_Finalize(ierr)
end program regions_f
