// SPDX-License-Identifier: MIT
/*
 * A main() for a fuzz harness without libFuzzer: every file in the
 * directories named on the command line is read into a heap block of
 * exactly its size and handed to LLVMFuzzerTestOneInput() once. Built by
 * tests/fuzz/meson.build with the project's compiler (gcc or clang, no
 * sanitizer needed) and run as the `unit` test fuzz-seeds-<harness>, so
 * every `make test` proves the committed seeds (and the reproducers of
 * fixed crashes among them) still pass every harness's invariants.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	FILE *f;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	f = fopen(path, "rb");
	/* One byte more than the file, so an empty file still gets a block. */
	buf = malloc((size_t)st.st_size + 1);
	if (!f || !buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
	free(buf);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char path[4096];

		if (!d) {
			fprintf(stderr, "replay: cannot open %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			n += replay_file(path);
		}
		closedir(d);
	}
	if (n == 0) {
		fprintf(stderr, "replay: no inputs in the directories given\n");
		return 1;
	}
	printf("replayed %u inputs\n", n);
	return 0;
}
