! talp_api_f.f90: the Fortran twin of talp_api.c, the runtime query API from
! inside a Fortran program: DLB_TALP_CollectPOPMetrics through an
! interface bound to its C name (as DLB's dlbf_talp.h declares it, with the
! released DLB 3.6/3.7 dlb_pop_metrics_t), and popmon's popmon_metrics
! (`use popmon`, module source shim/popmon.f90 compiled with the program).
! Linked against the DLB stand-in (examples/dlbstub); under popmon the
! preloaded libpopmon answers.
!
! Usage: talp_api_f [K_MS [ITERATIONS]]    defaults: K = 50 ms, N = 8
!
! The design and the expected values are talp_api.c's: rank r works (r+1)*K,
! then MPI_Allreduce; LB = PE = (P+1)/(2P) (0.625 for P = 4) from every call,
! num_mpi_ranks = P; the region "rank 0 only" (registered on rank 0 only)
! collected on every rank: 1 process, elapsed K, PE 1. Same output lines.
program talp_api_f
  use mpi
  use popmon
  use iso_c_binding
  implicit none

  ! dlb_pop_metrics_t of DLB 3.6/3.7 (384 bytes).
  type, bind(c) :: dlb_pop_metrics_t
    character(kind=c_char) :: name(128)
    integer(c_int) :: num_cpus, num_mpi_ranks, num_nodes
    real(c_float) :: avg_cpus
    integer(c_int) :: num_gpus
    real(c_double) :: cycles, instructions
    integer(c_int64_t) :: num_measurements, num_mpi_calls, num_omp_parallels, num_omp_tasks
    integer(c_int64_t) :: num_gpu_runtime_calls, elapsed_time, useful_time, mpi_time
    integer(c_int64_t) :: omp_load_imbalance_time, omp_scheduling_time, omp_serialization_time
    integer(c_int64_t) :: gpu_runtime_time
    real(c_double) :: min_mpi_normd_proc, min_mpi_normd_node
    integer(c_int64_t) :: gpu_useful_time, gpu_communication_time, gpu_inactive_time
    integer(c_int64_t) :: max_gpu_useful_time, max_gpu_active_time
    real(c_float) :: parallel_efficiency, mpi_parallel_efficiency, mpi_communication_efficiency
    real(c_float) :: mpi_load_balance, mpi_load_balance_in, mpi_load_balance_out
    real(c_float) :: omp_parallel_efficiency, omp_load_balance, omp_scheduling_efficiency
    real(c_float) :: omp_serialization_efficiency, device_offload_efficiency
    real(c_float) :: gpu_parallel_efficiency, gpu_load_balance, gpu_communication_efficiency
    real(c_float) :: gpu_orchestration_efficiency
  end type dlb_pop_metrics_t

  ! dlb_node_metrics_t of DLB 3.6/3.7 (184 bytes).
  type, bind(c) :: dlb_node_metrics_t
    character(kind=c_char) :: name(128)
    integer(c_int) :: node_id, processes_per_node
    integer(c_int64_t) :: total_useful_time, total_mpi_time, max_useful_time, max_mpi_time
    real(c_float) :: parallel_efficiency, communication_efficiency, load_balance
  end type dlb_node_metrics_t

  interface
    function dlb_talp_collectpopmetrics(monitor, metrics) bind(c, name='DLB_TALP_CollectPOPMetrics') result(rc)
      import :: c_ptr, c_int, dlb_pop_metrics_t
      type(c_ptr), value :: monitor
      type(dlb_pop_metrics_t), intent(out) :: metrics
      integer(c_int) :: rc
    end function dlb_talp_collectpopmetrics
    function dlb_talp_collectpopnodemetrics(monitor, metrics) bind(c, name='DLB_TALP_CollectPOPNodeMetrics') &
        result(rc)
      import :: c_ptr, c_int, dlb_node_metrics_t
      type(c_ptr), value :: monitor
      type(dlb_node_metrics_t), intent(out) :: metrics
      integer(c_int) :: rc
    end function dlb_talp_collectpopnodemetrics
    function usleep(us) bind(c, name='usleep') result(rc)
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: us
      integer(c_int) :: rc
    end function usleep
  end interface

  integer, parameter :: DLB_SUCCESS = 0, DLB_ERR_NOTALP = -16
  integer :: ierr, rank, nprocs, it, n, rc, rc2, failures, one, total
  integer(c_int32_t) :: k_us
  real :: k_ms
  character(len=32) :: arg
  type(dlb_pop_metrics_t) :: pm
  type(dlb_node_metrics_t) :: nm
  type(popmon_metrics_t) :: last, reg
  type(c_ptr) :: only

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  k_ms = 50
  n = 8
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) k_ms
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) n
  end if
  k_us = int(k_ms * 1000, c_int32_t)
  failures = 0

  do it = 1, n
    rc = usleep(k_us * (rank + 1))
    one = 1
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    rc = dlb_talp_collectpopmetrics(c_null_ptr, pm)
    if (rc == DLB_ERR_NOTALP) then
      if (rank == 0) print '(a)', 'ok (TALP not enabled)'
      call MPI_Finalize(ierr)
      stop
    end if
    rc2 = popmon_metrics("", POPMON_WINDOW_SINCE_LAST, last)
    if (rc /= DLB_SUCCESS .or. rc2 /= POPMON_SUCCESS) failures = failures + 1
    if (rank == 0) print '(a,i0,a,i0,a,f0.4,a,f0.4,a,i0,a,f0.4)', 'iter ', it, ' rc ', rc, &
      ' lb ', pm%mpi_load_balance, ' pe ', pm%parallel_efficiency, ' ranks ', pm%num_mpi_ranks, &
      ' last_lb ', last%mpi_load_balance
  end do

  ! A region of rank 0 only; the others register it only to collect it.
  if (rank == 0) then
    only = popmon_region_register("rank 0 only")
    rc = popmon_region_start(only)
    rc = usleep(k_us)
    rc = popmon_region_stop(only)
  end if
  rc = popmon_metrics("rank 0 only", POPMON_WINDOW_RUN, reg)
  only = popmon_region_register("rank 0 only")
  rc2 = dlb_talp_collectpopmetrics(only, pm)
  print '(a,i0,a,i0,a,i0,a,f0.1,a,f0.4,a,i0,a,i0)', 'rank ', rank, ' one-rank rc ', rc, ' ranks ', &
    reg%processes, ' elapsed_ms ', real(reg%elapsed_ns) / 1e6, ' pe ', reg%parallel_efficiency, &
    ' dlb_rc ', rc2, ' dlb_ranks ', pm%num_mpi_ranks
  if (rc /= POPMON_SUCCESS .or. rc2 /= DLB_SUCCESS .or. reg%processes /= 1 .or. pm%num_mpi_ranks /= 1) &
    failures = failures + 1

  rc = dlb_talp_collectpopnodemetrics(c_null_ptr, nm)
  if (rc /= DLB_SUCCESS) failures = failures + 1
  if (rank == 0) print '(a,i0,a,i0,a,f0.4,a,f0.4)', 'node rc ', rc, ' ppn ', nm%processes_per_node, &
    ' lb ', nm%load_balance, ' pe ', nm%parallel_efficiency
  rc = dlb_talp_collectpopmetrics(c_null_ptr, pm)
  if (rc /= DLB_SUCCESS) failures = failures + 1
  if (rank == 0) then
    print '(a,f0.4,a,f0.4,a,f0.4,a,i0,a,i0,a,i0,a,i0,a,i0,a,f0.4,a,f0.4)', 'final lb ', pm%mpi_load_balance, &
      ' pe ', pm%parallel_efficiency, ' comm ', pm%mpi_communication_efficiency, ' ranks ', &
      pm%num_mpi_ranks, ' elapsed_ns ', pm%elapsed_time, ' useful_ns ', pm%useful_time, &
      ' mpi_ns ', pm%mpi_time, ' nodes ', pm%num_nodes, ' in ', pm%mpi_load_balance_in, &
      ' out ', pm%mpi_load_balance_out
    if (failures == 0) print '(a)', 'ok'
  end if
  flush (6)
  call MPI_Finalize(ierr)
  if (failures /= 0) error stop 1
end program talp_api_f
