/* core.h: start-up and exit of the process (core.c). Nothing below calls
 * into core.c: the bottom layer reaches its start-up through the hooks it
 * places (base/process.h, POPMON_STARTUP). What it exports is the public
 * API's popmon_api_measured (popmon.h). */
#ifndef POPMON_CORE_H
#define POPMON_CORE_H

/* POPMON_VERSION, the version string written into measurement files, is
 * not defined here: the build passes it (internal/shimbuild,
 * -DPOPMON_VERSION from the Go constant popmon.Version), so that the
 * library and the popmon binary cannot disagree. */

#include "popmon.h"

#endif /* POPMON_CORE_H */
