/* The I/O floor for bench/snapshot_vs_node_exporter.py: open, read once and close every
 * file named on the command line, parsing nothing. What a collector that reads the same
 * files cannot go below on this machine. */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  char buf[4096];
  for (int i = 1; i < argc; ++i) {
    int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (read(fd, buf, sizeof buf) < 0) buf[0] = 0;
    close(fd);
  }
  return 0;
}
