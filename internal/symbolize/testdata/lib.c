#include "probe.h"

int lib_work(int n) {
	int s = 0;
#pragma omp parallel reduction(+ : s) /* MARK lib-pragma */
	{
		s += n;
	}
	return s;
}
