/* dlb_output.h: DLB's end-of-run output from the measurement (dlb_output.c). */
#ifndef POPMON_DLB_OUTPUT_H
#define POPMON_DLB_OUTPUT_H

/* Writes what DLB_ARGS asks for at the end of the run (--talp-output-file in
 * its format; --talp alone: DLB's summary on stderr, unless under_popmon,
 * whose report says it) from the measurement file just written. 0 when done
 * or nothing was asked, -1 after one popmon: line (the measurement is kept). */
int popmon_dlb_output(const char *measurement, int under_popmon);

#endif /* POPMON_DLB_OUTPUT_H */
