! dlbf_drom.h: DLB 3.7's DROM API for Fortran, written for popmon's
! DLB-compatible prefix from DLB's documented interface, with DLB's semantics
! and codes on popmon's node registry (docs/drom.md).
      integer, parameter :: DLB_DROM_FLAGS_NONE = 0
      integer, parameter :: DLB_STEAL_CPUS = 1
      integer, parameter :: DLB_RETURN_STOLEN = 2
      integer, parameter :: DLB_SYNC_QUERY = 4
      integer, parameter :: DLB_SYNC_NOW = 8
      integer, parameter :: DLB_NO_SYNC = 16
      integer, parameter :: DLB_FREE_CPUS_SLURM = 32
      interface
       function dlb_drom_attach()                                       &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_Attach')
        use iso_c_binding
        integer(kind=c_int) :: ierr
      end function dlb_drom_attach
       function dlb_drom_detach()                                       &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_Detach')
        use iso_c_binding
        integer(kind=c_int) :: ierr
      end function dlb_drom_detach
       function dlb_drom_getnumcpus(ncpus)                              &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_GetNumCpus')
        use iso_c_binding
        integer(kind=c_int) :: ierr
        integer(kind=c_int), intent(out) :: ncpus
      end function dlb_drom_getnumcpus
       function dlb_drom_getpidlist(pidlist, nelems, max_len)           &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_GetPidList')
        use iso_c_binding
        integer(kind=c_int) :: ierr
        integer(kind=c_int), intent(out) :: pidlist(*)
        integer(kind=c_int), intent(out) :: nelems
        integer(kind=c_int), value, intent(in) :: max_len
      end function dlb_drom_getpidlist
       function dlb_drom_getprocessmask(pid, mask, flags)               &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_GetProcessMask')
        use iso_c_binding
        integer(kind=c_int) :: ierr
        integer(kind=c_int), value, intent(in) :: pid
        type(c_ptr), value, intent(in) :: mask
        integer(kind=c_int), value, intent(in) :: flags
      end function dlb_drom_getprocessmask
       function dlb_drom_setprocessmask(pid, mask, flags)               &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_SetProcessMask')
        use iso_c_binding
        integer(kind=c_int) :: ierr
        integer(kind=c_int), value, intent(in) :: pid
        type(c_ptr), value, intent(in) :: mask
        integer(kind=c_int), value, intent(in) :: flags
      end function dlb_drom_setprocessmask
       function dlb_drom_setprocessmaskstr(pid, mask, flags)            &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_SetProcessMaskStr')
        use iso_c_binding
        integer(kind=c_int) :: ierr
        integer(kind=c_int), value, intent(in) :: pid
        character(kind=c_char), intent(in) :: mask(*)
        integer(kind=c_int), value, intent(in) :: flags
      end function dlb_drom_setprocessmaskstr
       function dlb_drom_postfinalize(pid, flags)                       &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_PostFinalize')
        use iso_c_binding
        integer(kind=c_int) :: ierr
        integer(kind=c_int), value, intent(in) :: pid
        integer(kind=c_int), value, intent(in) :: flags
      end function dlb_drom_postfinalize
       function dlb_drom_recoverstolencpus(pid)                         &
     & result(ierr)                                                     &
     & bind(c, name='DLB_DROM_RecoverStolenCpus')
        use iso_c_binding
        integer(kind=c_int) :: ierr
        integer(kind=c_int), value, intent(in) :: pid
      end function dlb_drom_recoverstolencpus
      end interface
