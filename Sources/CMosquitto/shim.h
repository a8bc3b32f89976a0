#ifndef SENSORHUB_CMOSQUITTO_SHIM_H
#define SENSORHUB_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
