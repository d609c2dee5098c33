// SPDX-License-Identifier: MIT
/* stub: being written */
typedef int rtl_stub_mem;
