package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func readCbids(t *testing.T) []Cbid {
	t.Helper()
	f, err := os.Open(cbidsData)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ParseCbids(f)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestCbidsIssue35: every call issue 35 lists is in the table of each CUDA
// version that has it, with the id the vendor's header of that version
// gives (the issue's values; the 12.6 ones also read from CUDA 12.6's
// cupti_runtime_cbid.h and cupti_driver_cbid.h), and in no older version's.
func TestCbidsIssue35(t *testing.T) {
	rows := readCbids(t)
	want := []struct {
		domain, name string
		id, since    int
	}{
		{"runtime", "cudaMemcpyBatchAsync_v13000", 509, 13000},
		{"runtime", "cudaMemcpyBatchAsync_ptsz_v13000", 510, 13000},
		{"runtime", "cudaMemcpy3DBatchAsync_v13000", 511, 13000},
		{"runtime", "cudaMemcpy3DBatchAsync_ptsz_v13000", 512, 13000},
		{"runtime", "cudaMemcpy3DBatchAsync_v12080", 484, 12080},
		{"runtime", "cudaMemcpy3DBatchAsync_ptsz_v12080", 485, 12080},
		{"driver", "cuMemcpyBatchAsync_v2", 796, 13000},
		{"driver", "cuMemcpyBatchAsync_v2_ptsz", 797, 13000},
		{"driver", "cuMemcpy3DBatchAsync_v2", 798, 13000},
		{"driver", "cuMemcpy3DBatchAsync_v2_ptsz", 799, 13000},
		{"runtime", "cudaGraphInstantiate_v12000", 443, 12000},
		{"runtime", "cudaGraphInstantiateWithParams_ptsz_v12000", 437, 12000},
		{"driver", "cuGraphExecUpdate_v2", 696, 12000},
		{"driver", "cuGraphInstantiateWithParams_ptsz", 657, 12000},
		{"driver", "cuMemAlloc_v2", 243, 3020},
		{"driver", "cuMemFree_v2", 245, 3020},
		{"driver", "cuMemAllocHost_v2", 294, 3020},
		{"driver", "cuMemHostAlloc_v2", 271, 3020},
		{"driver", "cuMemAllocManaged", 371, 6000},
		{"driver", "cuMemAllocAsync", 598, 11020},
		{"driver", "cuMemAllocAsync_ptsz", 599, 11020},
		{"driver", "cuMemFreeAsync", 600, 11020},
		{"driver", "cuMemFreeAsync_ptsz", 601, 11020},
		{"runtime", "cudaMallocAsync_v11020", 373, 11020},
		{"runtime", "cudaMallocAsync_ptsz_v11020", 374, 11020},
		{"runtime", "cudaFreeAsync_v11020", 375, 11020},
		{"runtime", "cudaFreeAsync_ptsz_v11020", 376, 11020},
		{"runtime", "cudaMallocFromPoolAsync_v11020", 391, 11020},
		{"runtime", "cudaMallocFromPoolAsync_ptsz_v11020", 392, 11020},
		{"runtime", "cudaMalloc3D_v3020", 140, 3020},
		{"runtime", "cudaMalloc3DArray_v3020", 141, 3020},
		{"driver", "cuCtxSynchronize_v2", 800, 13000},
		{"runtime", "__cudaLaunchKernel_v13000", 505, 13000},
		{"runtime", "__cudaLaunchKernel_ptsz_v13000", 506, 13000},
		{"driver", "cuLaunchHostFunc_v2", 831, 13000},
		{"driver", "cuLaunchHostFunc_v2_ptsz", 832, 13000},
		{"runtime", "cudaLaunchHostFunc_v2_v13000", 550, 13000},
		{"runtime", "cudaLaunchHostFunc_v2_ptsz_v13000", 551, 13000},
		{"runtime", "cudaMemcpyWithAttributesAsync_v13000", 554, 13000},
		{"runtime", "cudaMemcpyWithAttributesAsync_ptsz_v13000", 555, 13000},
		{"runtime", "cudaMemcpy3DWithAttributesAsync_v13000", 556, 13000},
		{"runtime", "cudaMemcpy3DWithAttributesAsync_ptsz_v13000", 557, 13000},
		{"driver", "cuMemcpyWithAttributesAsync", 837, 13000},
		{"driver", "cuMemcpyWithAttributesAsync_ptsz", 838, 13000},
		{"driver", "cuMemcpy3DWithAttributesAsync", 839, 13000},
		{"driver", "cuMemcpy3DWithAttributesAsync_ptsz", 840, 13000},
		{"runtime", "cudaExecutionCtxSynchronize_v13000", 534, 13000},
		// The launch and synchronisation every version must have.
		{"runtime", "cudaLaunchKernel_v7000", 211, 7000},
		{"runtime", "cudaDeviceSynchronize_v3020", 165, 3020},
		{"driver", "cuLaunchKernel", 307, 4000},
		{"driver", "cuCtxSynchronize", 17, 2000},
	}
	versions := []int{11080, 12040, 12060, 12080, 12090, 13000, 13040}
	for _, w := range want {
		for _, v := range versions {
			id, ok := CbidTable(rows, w.domain, v)[w.name]
			switch {
			case v >= w.since && (!ok || id != w.id):
				t.Errorf("CUDA %d %s table: %s = %d (present %v), want %d", v, w.domain, w.name, id, ok, w.id)
			case v < w.since && ok:
				t.Errorf("CUDA %d %s table has %s (%d), which CUDA %d introduced", v, w.domain, w.name, id, w.since)
			}
		}
	}
}

// TestCbidsHeader: shim/gpu_cbids.h is what the generator writes from the
// table, and it names every row's id under the row's name (the names
// gpu_cupti.c uses are the table's).
func TestCbidsHeader(t *testing.T) {
	rows := readCbids(t)
	want := GenerateCbidsHeader(rows)
	got, err := os.ReadFile(filepath.Join("..", cbidsFile))
	if err != nil {
		t.Fatalf("%v: run go generate ./shim/gen", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("shim/%s is not what shim/gen writes from %s: run go generate ./shim/gen", cbidsFile, cbidsData)
	}
	for _, c := range rows {
		prefix := map[string]string{"runtime": "POPMON_CBID_RT_", "driver": "POPMON_CBID_DRV_"}[c.Domain]
		line := prefix + c.Name + " = " + strconv.Itoa(c.ID) + ","
		if !strings.Contains(string(got), line) {
			t.Errorf("%s lacks %q", cbidsFile, line)
		}
	}
	src, err := os.ReadFile(filepath.Join("..", "gpu_cupti.c"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `#include "gpu_cbids.h"`) || strings.Contains(string(src), "runtime_cbids[] = {") {
		t.Errorf("gpu_cupti.c must take its callback ids from gpu_cbids.h, not a table of its own")
	}
}

// TestParseCbidsRejects: rows the table must not hold.
func TestParseCbidsRejects(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"duplicate id", "runtime 211 cudaLaunchKernel_v7000 7.0 launch 12.6\nruntime 211 cudaLaunch_v3020 3.2 launch 12.6\n"},
		{"duplicate name", "driver 307 cuLaunchKernel 4.0 launch 12.6\ndriver 308 cuLaunchKernel 4.0 launch 12.6\n"},
		{"suffix and since disagree", "runtime 443 cudaGraphInstantiate_v12000 11.0 graph 12.6\n"},
		{"runtime name without version", "runtime 211 cudaLaunchKernel 7.0 launch 12.6\n"},
		{"unknown domain", "nvtx 1 nvtxMarkA 10.0 launch 12.6\n"},
		{"unknown group", "driver 307 cuLaunchKernel 4.0 kernels 12.6\n"},
		{"unknown source", "driver 307 cuLaunchKernel 4.0 launch memory\n"},
		{"bad version", "driver 307 cuLaunchKernel 4 launch 12.6\n"},
		{"short row", "driver 307 cuLaunchKernel\n"},
	} {
		if _, err := ParseCbids(strings.NewReader(c.text)); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
