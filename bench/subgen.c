/* subgen: the broker's floor for subscribing many topics, through libmosquitto as hubd does.
 *
 * usage: subgen HOST PORT TOPIC_FMT SENSORS [BATCH]
 *   TOPIC_FMT  printf format with one %d, e.g. "bench/s%d"
 *   SENSORS    number of topics to subscribe to, at QoS 1
 *   BATCH      filters per SUBSCRIBE packet (default 500, hubd's batch)
 * Connects with a clean session, sends every SUBSCRIBE at once (as hubd does at start) and prints
 * "subscribed N in S s" once every SUBACK has arrived: S counts from the CONNACK, so it is the subscribing alone.
 */
#include <mosquitto.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int connected = 0, failed = 0;
static volatile long acked = 0;

static void on_connect(struct mosquitto *m, void *u, int rc) { (void)m; (void)u; if (rc) failed = 1; else connected = 1; }
static void on_subscribe(struct mosquitto *m, void *u, int mid, int count, const int *granted) {
    (void)m; (void)u; (void)mid; (void)granted;
    acked += count;
}

static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: subgen HOST PORT TOPIC_FMT SENSORS [BATCH]\n"); return 2; }
    const char *host = argv[1]; int port = atoi(argv[2]); const char *fmt = argv[3];
    long sensors = atol(argv[4]); int batch = argc > 5 ? atoi(argv[5]) : 500;
    if (sensors <= 0 || batch <= 0) { fprintf(stderr, "subgen: SENSORS and BATCH must be positive\n"); return 2; }
    mosquitto_lib_init();
    char id[64]; snprintf(id, sizeof id, "subgen-%ld", (long)time(NULL) ^ (long)clock());
    struct mosquitto *m = mosquitto_new(id, true, NULL);
    if (!m) { fprintf(stderr, "subgen: mosquitto_new failed\n"); return 1; }
    mosquitto_connect_callback_set(m, on_connect);
    mosquitto_subscribe_callback_set(m, on_subscribe);
    if (mosquitto_connect(m, host, port, 60) != MOSQ_ERR_SUCCESS) { fprintf(stderr, "subgen: cannot connect\n"); return 1; }
    while (!connected && !failed) mosquitto_loop(m, 100, 1);
    if (failed) { fprintf(stderr, "subgen: the broker refused the connection\n"); return 1; }

    char **topics = malloc(sizeof(char *) * (size_t)batch);
    for (int i = 0; i < batch; i++) topics[i] = malloc(256);
    double start = now();
    for (long first = 0; first < sensors; first += batch) {
        int count = (int)((sensors - first) < batch ? (sensors - first) : batch);
        for (int i = 0; i < count; i++) snprintf(topics[i], 256, fmt, (int)(first + i));
        int rc = mosquitto_subscribe_multiple(m, NULL, count, topics, 1, 0, NULL);
        if (rc != MOSQ_ERR_SUCCESS) { fprintf(stderr, "subgen: subscribe failed: %s\n", mosquitto_strerror(rc)); return 1; }
    }
    while (acked < sensors) {
        int rc = mosquitto_loop(m, 100, 1);
        if (rc != MOSQ_ERR_SUCCESS) { fprintf(stderr, "subgen: %s\n", mosquitto_strerror(rc)); return 1; }
    }
    printf("subscribed %ld in %.3f s\n", sensors, now() - start);
    mosquitto_disconnect(m);
    mosquitto_destroy(m);
    mosquitto_lib_cleanup();
    return 0;
}
