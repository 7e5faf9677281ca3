! popmon.f90: the popmon region API for Fortran.
!
!   use popmon
!   type(c_ptr) :: solve
!   solve = popmon_region_register("solve")
!   ierr = popmon_region_start(solve)
!   ... work ...
!   ierr = popmon_region_stop(solve)
!
! Runtime queries (docs/library.md, "Runtime query API"):
!
!   type(popmon_metrics_t) :: m
!   ierr = popmon_metrics("solve", POPMON_WINDOW_SINCE_LAST, m)  ! collective
!   ierr = popmon_metrics_local("", POPMON_WINDOW_RUN, m)        ! this process; "" = Global
!   print *, m%parallel_efficiency, m%mpi_load_balance
!
! Compile this file with your program (gfortran -c popmon.f90). Nothing needs
! to be linked: the module finds the measurement library at run time (it is
! preloaded by `popmon run` / `popmon exec`); without it every call is a
! no-op that returns POPMON_ERR_NOTMEASURED, so instrumented programs need no
! second build. Semantics are those of popmon.h (and of DLB/TALP regions).
module popmon
  use iso_c_binding
  implicit none
  private

  public :: popmon_region_register, popmon_region_global, popmon_region_last
  public :: popmon_region_start, popmon_region_stop, popmon_region_reset
  public :: popmon_region_report, popmon_measured
  public :: popmon_metrics, popmon_metrics_local

  !> The implicit whole-run region.
  type(c_ptr), parameter, public :: POPMON_GLOBAL = c_null_ptr
  integer(c_int), parameter, public :: POPMON_SUCCESS = 0
  integer(c_int), parameter, public :: POPMON_NOUPDT = 2
  integer(c_int), parameter, public :: POPMON_ERR_NOENT = -11
  integer(c_int), parameter, public :: POPMON_ERR_NOTMEASURED = -16
  integer(c_int), parameter, public :: POPMON_ERR_NOINIT = -2
  integer(c_int), parameter, public :: POPMON_ERR_TIMEOUT = -9
  integer(c_int), parameter, public :: POPMON_ERR_UNKNOWN = -1
  integer(c_int), parameter, public :: POPMON_WINDOW_RUN = 0
  integer(c_int), parameter, public :: POPMON_WINDOW_SINCE_LAST = 1
  integer(c_int), parameter, public :: POPMON_METRICS_OPENMP = 1
  integer(c_int), parameter, public :: POPMON_METRICS_GPU = 2

  !> struct popmon_metrics of popmon.h (the library fills at most size bytes;
  !> popmon_metrics sets size).
  type, bind(c), public :: popmon_metrics_t
    integer(c_int32_t) :: size = 0
    integer(c_int32_t) :: version = 0
    character(kind=c_char) :: region(128) = c_null_char
    integer(c_int32_t) :: window = 0, processes = 0, nodes = 0, cpus = 0
    integer(c_int32_t) :: flags = 0, reserved = 0
    integer(c_int64_t) :: visits = 0, elapsed_ns = 0, useful_ns = 0, mpi_ns = 0, mpi_worker_idle_ns = 0
    integer(c_int64_t) :: omp_serialization_ns = 0, omp_load_imbalance_ns = 0, omp_scheduling_ns = 0
    integer(c_int64_t) :: gpu_runtime_ns = 0, mpi_calls = 0
    real(c_double) :: parallel_efficiency = 0, mpi_parallel_efficiency = 0
    real(c_double) :: mpi_communication_efficiency = 0, mpi_load_balance = 0
    real(c_double) :: mpi_load_balance_in = 0, mpi_load_balance_out = 0
    real(c_double) :: omp_parallel_efficiency = 0, omp_serialization_efficiency = 0
    real(c_double) :: omp_load_balance = 0, omp_scheduling_efficiency = 0
    real(c_double) :: device_offload_efficiency = 0
  end type popmon_metrics_t

  abstract interface
    function register_fn(name, length) bind(c) result(handle)
      import :: c_char, c_int, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int), value :: length
      type(c_ptr) :: handle
    end function register_fn
    function handle_fn(handle) bind(c) result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int) :: rc
    end function handle_fn
    function metrics_fn(name, length, window, m) bind(c) result(rc)
      import :: c_char, c_int, popmon_metrics_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int), value :: length, window
      type(popmon_metrics_t), intent(inout) :: m
      integer(c_int) :: rc
    end function metrics_fn
    function void_fn() bind(c) result(rc)
      import :: c_int
      integer(c_int) :: rc
    end function void_fn
  end interface

  interface
    function c_dlsym(handle, symbol) bind(c, name='dlsym') result(p)
      import :: c_ptr, c_char, c_funptr
      type(c_ptr), value :: handle
      character(kind=c_char), dimension(*), intent(in) :: symbol
      type(c_funptr) :: p
    end function c_dlsym
  end interface

contains

  ! Looks a library entry point up at run time (RTLD_DEFAULT = NULL).
  function entry(symbol) result(p)
    character(len=*), intent(in) :: symbol
    type(c_funptr) :: p
    p = c_dlsym(c_null_ptr, symbol // c_null_char)
  end function entry

  !> Registers (or looks up) the region called name; a null pointer when not measured.
  !> "Global" in any case is refused (one line; a handle whose calls do nothing):
  !> the whole run's region is popmon_region_global().
  function popmon_region_register(name) result(handle)
    character(len=*), intent(in) :: name
    type(c_ptr) :: handle
    procedure(register_fn), pointer :: f
    type(c_funptr) :: p
    handle = c_null_ptr
    p = entry('popmon_f_region_register')
    if (.not. c_associated(p)) return
    call c_f_procpointer(p, f)
    handle = f(name, int(len(name), c_int))
  end function popmon_region_register

  !> The implicit whole-run region "Global".
  function popmon_region_global() result(handle)
    type(c_ptr) :: handle
    handle = POPMON_GLOBAL
  end function popmon_region_global

  !> The most recently started region that is still open (for stop).
  function popmon_region_last() result(handle)
    type(c_ptr) :: handle
    handle = transfer(1_c_intptr_t, handle)
  end function popmon_region_last

  integer(c_int) function call_handle(symbol, handle) result(rc)
    character(len=*), intent(in) :: symbol
    type(c_ptr), intent(in) :: handle
    procedure(handle_fn), pointer :: f
    type(c_funptr) :: p
    rc = POPMON_ERR_NOTMEASURED
    p = entry(symbol)
    if (.not. c_associated(p)) return
    call c_f_procpointer(p, f)
    rc = f(handle)
  end function call_handle

  !> Starts (opens) a region.
  integer(c_int) function popmon_region_start(handle) result(rc)
    type(c_ptr), intent(in) :: handle
    rc = call_handle('popmon_api_region_start', handle)
  end function popmon_region_start

  !> Stops (closes) a region.
  integer(c_int) function popmon_region_stop(handle) result(rc)
    type(c_ptr), intent(in) :: handle
    rc = call_handle('popmon_api_region_stop', handle)
  end function popmon_region_stop

  !> Discards what a region has accumulated so far.
  integer(c_int) function popmon_region_reset(handle) result(rc)
    type(c_ptr), intent(in) :: handle
    rc = call_handle('popmon_api_region_reset', handle)
  end function popmon_region_reset

  !> Prints this process's accounts of a region to stderr.
  integer(c_int) function popmon_region_report(handle) result(rc)
    type(c_ptr), intent(in) :: handle
    rc = call_handle('popmon_api_region_report', handle)
  end function popmon_region_report

  !> .true. when the program runs under popmon.
  logical function popmon_measured()
    procedure(void_fn), pointer :: f
    type(c_funptr) :: p
    popmon_measured = .false.
    p = entry('popmon_api_measured')
    if (.not. c_associated(p)) return
    call c_f_procpointer(p, f)
    popmon_measured = f() /= 0
  end function popmon_measured

  integer(c_int) function call_metrics(symbol, region, window, m) result(rc)
    character(len=*), intent(in) :: symbol, region
    integer(c_int), intent(in) :: window
    type(popmon_metrics_t), intent(inout) :: m
    procedure(metrics_fn), pointer :: f
    type(c_funptr) :: p
    rc = POPMON_ERR_NOTMEASURED
    m%size = int(c_sizeof(m), c_int32_t)
    p = entry(symbol)
    if (.not. c_associated(p)) return
    call c_f_procpointer(p, f)
    rc = f(region, int(len(region), c_int), window, m)
  end function call_metrics

  !> The POP metrics of region ("" or "Global": the whole run) over all ranks,
  !> in window (POPMON_WINDOW_RUN or POPMON_WINDOW_SINCE_LAST). Collective
  !> over MPI_COMM_WORLD: every rank calls it.
  integer(c_int) function popmon_metrics(region, window, m) result(rc)
    character(len=*), intent(in) :: region
    integer(c_int), intent(in) :: window
    type(popmon_metrics_t), intent(inout) :: m
    rc = call_metrics('popmon_f_metrics', region, window, m)
  end function popmon_metrics

  !> The same for the calling process alone (not collective).
  integer(c_int) function popmon_metrics_local(region, window, m) result(rc)
    character(len=*), intent(in) :: region
    integer(c_int), intent(in) :: window
    type(popmon_metrics_t), intent(inout) :: m
    rc = call_metrics('popmon_f_metrics_local', region, window, m)
  end function popmon_metrics_local

end module popmon
