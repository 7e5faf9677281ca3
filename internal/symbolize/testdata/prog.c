#include "probe.h"

#ifdef WITH_LIB
int lib_work(int n);
#endif

__attribute__((noinline)) void probe(void) { report("probe", __builtin_return_address(0)); }

int work(int n) {
	int s = 0;
#pragma omp parallel reduction(+ : s) /* MARK work-pragma */
	{
		s += n;
	}
	return s;
}

int main(void) { /* MARK main-def */
	int s = work(2);
#pragma omp parallel /* MARK main-pragma */
	{
		if (s < 0)
			probe();
	}
	probe(); /* MARK main-probe */
#ifdef WITH_LIB
	s += lib_work(3);
#endif
	return s > 0 ? 0 : 1;
}
