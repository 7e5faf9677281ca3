"""dlb_mpi: DLB's module for MPI programs (libdlb_mpi), the same calls as dlb.

Under popmon there is one library for MPI and non-MPI programs alike, so
this is dlb with DLB_MPI set (docs/python.md)."""
import os

os.environ["DLB_MPI"] = "1"
from dlb import *  # noqa: E402,F401,F403
