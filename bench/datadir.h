/* datadir.h — where the bench finds its reference inputs (md/in.lj,
 * md/in.lj.data.gz, md/log.lammps.gz: tests/data of the source tree,
 * installed as <datadir>/clphys by meson install). */
#ifndef CLPHYS_BENCH_DATADIR_H
#define CLPHYS_BENCH_DATADIR_H

/* The folder holding the reference inputs, first of: $CLPHYS_DATA_DIR,
 * $CLPHYS_TEST_DATA (as given, even when missing: the user asked for it),
 * the installed <prefix>/<datadir>/clphys, the source tree's tests/data,
 * ./tests/data.  The two compiled-in folders count only when they hold
 * md/in.lj, so that a build run from any folder and an installed command
 * both find their inputs. */
const char *bench_data_dir(void);

/* The folder holding the peers' programs (lammps_lj.py, openmm_lj.py,
 * lammps_gpu.py: bench/peers of the source tree, installed as
 * <datadir>/clphys/peers), first of: $CLPHYS_PEERS, the installed one, the
 * source tree's, ./bench/peers, the compiled-in ones counting only when
 * they hold lammps_lj.py. */
const char *bench_peers_dir(void);

#endif
