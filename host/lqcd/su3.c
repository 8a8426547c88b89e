/* su3.c — see lqcd_su3.h. */
#include "lqcd_su3.h"

#include <math.h>

void lqcd_su3_mul(double complex r[9], const double complex a[9], const double complex b[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
}

void lqcd_su3_mul_dag(double complex r[9], const double complex a[9], const double complex b[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r[i * 3 + j] =
                a[i * 3] * conj(b[j * 3]) + a[i * 3 + 1] * conj(b[j * 3 + 1]) + a[i * 3 + 2] * conj(b[j * 3 + 2]);
}

void lqcd_su3_third_row(double complex m[9])
{
    m[6] = conj(m[1] * m[5] - m[2] * m[4]);
    m[7] = conj(m[2] * m[3] - m[0] * m[5]);
    m[8] = conj(m[0] * m[4] - m[1] * m[3]);
}

/* row i *= 1 / |row i| */
static void normalize(double complex *row)
{
    const double n = 1 / sqrt(creal(row[0] * conj(row[0]) + row[1] * conj(row[1]) + row[2] * conj(row[2])));
    for (int j = 0; j < 3; j++) row[j] *= n;
}

void lqcd_su3_reunitarize(double complex m[9])
{
    normalize(m);
    const double complex d = conj(m[0]) * m[3] + conj(m[1]) * m[4] + conj(m[2]) * m[5]; /* <row0, row1> */
    for (int j = 0; j < 3; j++) m[3 + j] -= d * m[j];
    normalize(m + 3);
    lqcd_su3_third_row(m);
}
