/* SPDX-License-Identifier: MIT */
/*
 * rtl_drfl_api_real: the DRFL entry-point table on the vendor library.
 * Installed and built only when Meson found DRFL (-Ddrfl=auto|enabled);
 * see <rtloop/drfl_backend.h> for the backend that uses it.
 */
#ifndef RTLOOP_DRFL_REAL_H
#define RTLOOP_DRFL_REAL_H

#include <rtloop/compiler.h>
#include <rtloop/drfl_api.h>

RTL_BEGIN_DECLS

/*
 * Create a DRFL robot object (DRAFramework::CDRFLEx) and fill @api with
 * its entry points. Returns 0, or -EINVAL (@api NULL), -ENOMEM. Not
 * RT-safe.
 */
RTL_API int rtl_drfl_api_real(struct rtl_drfl_api *api);

/* Destroy the robot object of rtl_drfl_api_real(). NULL is accepted. */
RTL_API void rtl_drfl_api_real_free(struct rtl_drfl_api *api);

RTL_END_DECLS

#endif /* RTLOOP_DRFL_REAL_H */
