// SPDX-License-Identifier: MIT
/* The parts of _rtloop, registered in this order by PyInit__rtloop(). */
#include "_module.h"

const rtl_py_part_fn rtl_py_parts[] = { NULL };
const size_t rtl_py_parts_n = 0;
