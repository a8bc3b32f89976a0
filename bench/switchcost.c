// What one hand-off between threads costs on this machine (issue 38): a thread wakes another that sleeps in a futex
// and waits for it to answer, N times, 10 ms apart as at 100 msg/s (mode 0: every hand-off wakes a sleeping thread
// and an idle core), or back to back (mode 1: as in a burst). Prints the CPU the process spent per hand-off (the
// futex calls on both sides and the scheduler's switch in and out, as the process is charged for them; a core's own
// wake from idle is charged to no one), the voluntary context switches per hand-off (1 when each hand-off is one
// sleep and one wake) and the latency of a round trip. A notification that crosses K threads costs at least K times
// this, whatever the code on each thread does.
//   gcc -O2 -pthread -o /tmp/switchcost bench/switchcost.c && /tmp/switchcost 0
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int turn;  // 0: the main thread's, 1: the worker's
static void wait_for(int value) {
    while (atomic_load(&turn) != value) syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, !value, NULL, NULL, 0);
}
static void give(int value) {
    atomic_store(&turn, value);
    syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
static void *worker(void *rounds) {
    for (long i = 0; i < (long)rounds; i++) {
        wait_for(1);
        give(0);
    }
    return NULL;
}
static double now() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
static long switches() {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_nvcsw;
}
static double cpu() {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}
static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    long n = mode == 0 ? 1000 : 100000;
    double *latency = malloc(sizeof(double) * n);
    pthread_t thread;
    pthread_create(&thread, NULL, worker, (void *)n);
    double sleeping = 0, c0 = cpu();
    long s0 = switches();
    for (long i = 0; i < n; i++) {
        if (mode == 0) {
            // The timer's own wake-up is not a hand-off: its CPU is measured apart and taken off.
            double c = cpu();
            usleep(10000);
            sleeping += cpu() - c;
        }
        double a = now();
        give(1);
        wait_for(0);
        latency[i] = now() - a;
    }
    double spent = cpu() - c0 - sleeping;
    // usleep's own sleep is one voluntary switch a round in mode 0.
    double voluntary = (double)(switches() - s0 - (mode == 0 ? n : 0)) / n / 2;
    pthread_join(thread, NULL);
    qsort(latency, n, sizeof(double), compare);
    printf("mode %d: %ld round trips (2 hand-offs each): cpu/hand-off %.1f us, %.2f voluntary switches/hand-off, "
           "round trip p50 %.1f us p99 %.1f us\n",
           mode, n, spent / n / 2 * 1e6, voluntary, latency[n / 2] * 1e6, latency[n * 99 / 100] * 1e6);
    return 0;
}
