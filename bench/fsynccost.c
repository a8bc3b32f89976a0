// What one durable write costs on this machine (issue 38): N times, append 300 bytes to a file in the current
// directory and fsync it (mode 0), overwrite a pre-zeroed file and fsync (1) or fdatasync (2), 10 ms apart as at
// 100 msg/s; prints the CPU the process spent per write (its share of the kernel's work; run it under
// `/proc/stat` deltas for jbd2's and kworkers' too) and the latency. A notification that must be durable on its own
// (one a batch at 100 msg/s) costs at least this.
//   gcc -O2 -o /tmp/fsynccost bench/fsynccost.c && (cd /var/lib/sensorhub && /tmp/fsynccost 0)
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
#include <sys/resource.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static double cpu(){struct rusage r;getrusage(RUSAGE_SELF,&r);return r.ru_utime.tv_sec+r.ru_stime.tv_sec+(r.ru_utime.tv_usec+r.ru_stime.tv_usec)/1e6;}
int main(int argc,char**argv){
  int mode=argc>1?atoi(argv[1]):0; int n=1000; char buf[300]; memset(buf,'x',299); buf[299]='\n';
  unlink("fsynccost.tmp"); int fd=open("fsynccost.tmp",O_RDWR|O_CREAT|O_APPEND*(mode==0),0600);
  if(mode>=1){ char z[65536]={0}; for(int i=0;i<64;i++) write(fd,z,65536); fsync(fd); lseek(fd,0,SEEK_SET);} 
  double lat[1000]; double c0=cpu();
  for(int i=0;i<n;i++){ double a=now(); write(fd,buf,300); if(mode==2) fdatasync(fd); else fsync(fd); lat[i]=now()-a; usleep(10000);} 
  double c1=cpu();
  // sort
  for(int i=0;i<n;i++)for(int j=i+1;j<n;j++)if(lat[j]<lat[i]){double t=lat[i];lat[i]=lat[j];lat[j]=t;}
  unlink("fsynccost.tmp");
  printf("mode %d: cpu/op %.0f us, p50 %.2f ms p99 %.2f ms\n",mode,(c1-c0)/n*1e6,lat[n/2]*1e3,lat[n*99/100]*1e3);
}
