/* md_util.h — what the MD tests share (test_md, test_md_mpi): LAMMPS's
 * in.lj as LAMMPS itself wrote and ran it (tests/data/md). */
#ifndef CLPHYS_TEST_MD_UTIL_H
#define CLPHYS_TEST_MD_UTIL_H

#include "clphys.h"

/* Columns of a LAMMPS thermo row: step temp pe ke etotal press. */
#define TM_THERMO_COLS 6

/* LAMMPS bench/in.lj: its write_data file (32,000 atoms, md/in.lj.data.gz)
 * read into *s, and the thermo rows of steps 0, 10 and 20 of its log
 * (md/log.lammps.gz) into ref; both are decompressed (zlib) into the
 * folder dir and removed after reading.  Fails the test when either
 * cannot be read. */
void tm_lammps_in_lj(const char *dir, clphys_md_system *s, double ref[3][TM_THERMO_COLS]);

#endif
