/* The whole of the file at `path`, in memory from malloc, its length in *size; prints why and
 * exits with 1 where it cannot be read. Shared by the drop-in's C programs that load a code object
 * from a path (fill.c, hostile_kernels.c). */
#pragma once
#include <stdio.h>
#include <stdlib.h>

static void *read_file(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    perror(path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  *size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  void *bytes = malloc(*size);
  if (!bytes || fread(bytes, 1, *size, file) != *size) {
    perror(path);
    exit(1);
  }
  fclose(file);
  return bytes;
}
