#ifndef COUNTERSIGN_CLIBPQ_SHIM_H
#define COUNTERSIGN_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
