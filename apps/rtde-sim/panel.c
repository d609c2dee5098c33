// SPDX-License-Identifier: MIT
/*
 * The dashboard-owned controller state (panel.h): names, start state and
 * the JSON report, the last produced from the one counter list.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include <rtloop/json.h>

#include "panel.h"

static const char *const op_names[] = { "NONE", "MANUAL", "AUTOMATIC" };
static const char *const role_names[SIM_PANEL_ROLE_COUNT] = {
	"none", "programmer", "operator", "locked", "restricted",
};

void sim_panel_init(struct sim_panel *p)
{
	memset(p, 0, sizeof(*p));
	/* every controller has it, and boots with it */
	strcpy(p->installation, "default.installation");
	p->report_ns = INT64_MIN / 2;
}

void sim_panel_destroy(struct sim_panel *p)
{
	(void)p; /* nothing allocated; kept so sim.c pairs init with destroy */
}

const char *sim_panel_op_mode_name(enum sim_panel_op_mode m)
{
	return (unsigned)m < sizeof(op_names) / sizeof(op_names[0]) ? op_names[m] : NULL;
}

const char *sim_panel_role_name(enum sim_panel_role r)
{
	return (unsigned)r < SIM_PANEL_ROLE_COUNT ? role_names[r] : NULL;
}

int sim_panel_role_parse(const char *name)
{
	for (int i = 0; i < SIM_PANEL_ROLE_COUNT; i++)
		if (!strcasecmp(name, role_names[i]))
			return i;
	return -EINVAL;
}

void sim_panel_json(FILE *f, const struct sim_panel *p)
{
	fprintf(f, "{\"operational_mode\":\"%s\",\"user_role\":\"%s\",\"popup\":%s,",
		sim_panel_op_mode_name(p->op_mode), sim_panel_role_name(p->role),
		p->popup ? "true" : "false");
	fputs("\"popup_text\":", f);
	rtl_json_string(f, p->popup_text);
	fputs(",\"installation\":", f);
	rtl_json_string(f, p->installation);
	fprintf(f, ",\"program_saved\":%s,\"shutdown\":%s", p->saved ? "true" : "false",
		p->shutdown ? "true" : "false");
#define SIM_PANEL_JSON(name, what) fprintf(f, ",\"" #name "\":%" PRIu64, p->n.name);
	SIM_PANEL_COUNTERS(SIM_PANEL_JSON)
#undef SIM_PANEL_JSON
	fputc('}', f);
}
