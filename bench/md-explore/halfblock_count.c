/* halfblock_count.c — host count of the work of the cell-blocked half-cas kernel (cl/lj.cl
 * lj_half_block) on the seed input: blocks, slots, non-zero slots = global exchanges per
 * call without retries.  gcc -O2 halfblock_count.c -lm && ./a.out RHO EDGE */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "../md_seed.h"
static double img(double d, double b){ double h=.5*b; d = d>h?d-b:d; return d<-h?d+b:d; }
int main(int argc, char **argv)
{
    double rho = argc > 1 ? atof(argv[1]) : 0.5, edge = argc > 2 ? atof(argv[2]) : 50;
    double rs = 3.3, rc = 3.0;
    size_t n; double box[3];
    double *p0 = md_seed_system(rho, edge, &n, box);
    int nc[3];
    for (int d = 0; d < 3; d++) nc[d] = (int)floor(box[d] / (rs * (1 + 1e-5)));
    int ncell = nc[0]*nc[1]*nc[2];
    int *cell = malloc(n*sizeof(int)), *cnt = calloc(ncell+1, sizeof(int)), *start = calloc(ncell+1,sizeof(int));
    for (size_t i = 0; i < n; i++) {
        int q[3];
        for (int d = 0; d < 3; d++) { double w = p0[3*i+d] - box[d]*floor(p0[3*i+d]/box[d]); int c=(int)(w*nc[d]/box[d]); q[d]= c<0?0:c>=nc[d]?nc[d]-1:c; }
        cell[i] = (q[2]*nc[1]+q[1])*nc[0]+q[0]; cnt[cell[i]]++;
    }
    for (int c = 0; c < ncell; c++) start[c+1] = start[c] + cnt[c];
    int *fill = calloc(ncell, sizeof(int)); double *p = malloc(3*n*sizeof(double)); int *sc = malloc(n*sizeof(int));
    for (size_t i = 0; i < n; i++) { int s = start[cell[i]] + fill[cell[i]]++; for(int d=0;d<3;d++){double v=p0[3*i+d]; p[3*s+d]=v-box[d]*floor(v/box[d]);} sc[s]=cell[i]; }
    int cmax=0,cmin=1<<30; for(int c=0;c<ncell;c++){if(cnt[c]>cmax)cmax=cnt[c]; if(cnt[c]<cmin)cmin=cnt[c];}
    /* half list: j > i within rs (27 cells); mark in-cutoff pairs */
    size_t *off = calloc(n+1,sizeof(size_t)); size_t cap = n*80; int *lst = malloc(cap*sizeof(int)); char *in = malloc(cap);
    size_t k = 0, incut = 0;
    for (size_t i = 0; i < n; i++) {
        int c = sc[i], cx = c % nc[0], cy = (c / nc[0]) % nc[1], cz = c / (nc[0]*nc[1]);
        int lo[3], hi[3]; for (int d=0; d<3; d++){lo[d]= nc[d]>2?-1:0; hi[d]=nc[d]>1?1:0;}
        for (int dz=lo[2];dz<=hi[2];dz++) for(int dy=lo[1];dy<=hi[1];dy++) for(int dx=lo[0];dx<=hi[0];dx++){
            int xx=(cx+dx+nc[0])%nc[0], yy=(cy+dy+nc[1])%nc[1], zz=(cz+dz+nc[2])%nc[2];
            int cc=(zz*nc[1]+yy)*nc[0]+xx;
            for (int j = start[cc]; j < start[cc+1]; j++) { if (j <= (int)i) continue;
                double r2=0; for(int d=0;d<3;d++){double v=img(p[3*j+d]-p[3*i+d],box[d]); r2+=v*v;}
                if (r2 < rs*rs) { lst[k]=j; in[k]= r2 < rc*rc; incut += in[k]; k++; } }
        }
        off[i+1]=k;
    }
    printf("rho %g n %zu box %.4f nc %d^3 cells %d (count %d..%d, mean %.2f) half entries %zu in cutoff %zu\n", rho, n, box[0], nc[0], ncell, cmin, cmax, (double)n/ncell, k, incut);
    int cfg[][3] = {{2,2,2},{2,2,1},{2,1,1},{4,2,2},{2,2,4},{3,3,3},{4,4,2}};
    char *touched = calloc(n,1);
    for (size_t q = 0; q < sizeof cfg / sizeof *cfg; q++) {
        int B[3] = {cfg[q][0],cfg[q][1],cfg[q][2]}, nb[3], ex[3];
        for (int d=0;d<3;d++){ nb[d]=(nc[d]+B[d]-1)/B[d]; }
        long blocks = (long)nb[0]*nb[1]*nb[2], slots=0, nz=0, smax=0, ent=0, emax=0, nimax=0, cells_up=0, cellsmax=0;
        for (long g = 0; g < blocks; g++) {
            int b0[3] = {(int)(g % nb[0])*B[0], (int)((g / nb[0]) % nb[1])*B[1], (int)(g/(nb[0]*nb[1]))*B[2]};
            int bmin = (b0[2]*nc[1]+b0[1])*nc[0]+b0[0];
            for (int d=0;d<3;d++){ int wd = nc[d]-b0[d] < B[d] ? nc[d]-b0[d] : B[d]; ex[d] = nc[d] < wd+2 ? nc[d] : wd+2; }
            long s = 0, cu = 0;
            for (int lz=0; lz<ex[2]; lz++) for(int ly=0;ly<ex[1];ly++) for(int lx=0;lx<ex[0];lx++){
                int xx=(b0[0]-1+lx+nc[0])%nc[0], yy=(b0[1]-1+ly+nc[1])%nc[1], zz=(b0[2]-1+lz+nc[2])%nc[2];
                int cc=(zz*nc[1]+yy)*nc[0]+xx; if (cc >= bmin) { s += cnt[cc]; cu++; } }
            slots += s; if (s > smax) smax = s; cells_up += cu; if (cu > cellsmax) cellsmax = cu;
            /* i's of the block, touched slots */
            long e = 0, ni = 0; 
            int w[3]; for(int d=0;d<3;d++){ w[d] = nc[d]-b0[d] < B[d] ? nc[d]-b0[d] : B[d]; }
            int *tl = malloc(sizeof(int)*n); int nt = 0;
            for (int z=0;z<w[2];z++) for(int y=0;y<w[1];y++) for(int x=0;x<w[0];x++){
                int cc=((b0[2]+z)*nc[1]+b0[1]+y)*nc[0]+b0[0]+x;
                for (int i = start[cc]; i < start[cc+1]; i++) { ni++; e += off[i+1]-off[i];
                    int any = 0;
                    for (size_t kk = off[i]; kk < off[i+1]; kk++) if (in[kk]) { any = 1; int j = lst[kk]; if(!touched[j]){touched[j]=1; tl[nt++]=j;} }
                    if (any && !touched[i]) { touched[i]=1; tl[nt++]=i; }
                } }
            nz += nt; for (int t=0;t<nt;t++) touched[tl[t]]=0; free(tl);
            ent += e; if (e > emax) emax = e; if (ni > nimax) nimax = ni;
        }
        printf("block %dx%dx%d: %ld blocks, i/block max %ld, entries/block %.0f (max %ld), slot cells %.1f (max %ld), slots %.0f (max %ld), nonzero %.0f -> global CAS/call %ld (fp64 x3), %ld (fp32 pair x2); ratio to 3*pairs %.3f\n",
            B[0],B[1],B[2], blocks, nimax, (double)ent/blocks, emax, (double)cells_up/blocks, cellsmax, (double)slots/blocks, smax, (double)nz/blocks, 3*nz, 2*nz, (double)(3*nz)/(3.0*incut));
    }
    return 0;
}
