/* SPDX-License-Identifier: MIT */
/*
 * addr.h - a network peer's address: how logs name it ("tcp
 * 192.0.2.7:40512") and the key connections are counted by per address.
 */
#ifndef FPGAD_EXPORTER_ADDR_H
#define FPGAD_EXPORTER_ADDR_H

#include <nng/nng.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ADDR_NAME_MAX 80

/*
 * "@scheme ADDRESS:PORT" ("[ADDRESS]:PORT" for IPv6) of an AF_INET or
 * AF_INET6 address; -EAFNOSUPPORT for another family.
 */
int addr_format(const struct sockaddr *sa, const char *scheme, char *buf,
		size_t len);
/* "@scheme ADDRESS:PORT" of the peer of socket @fd, or "a @scheme peer". */
void addr_peer_name(int fd, const char *scheme, char *buf, size_t len);
/*
 * The IP address of @ss as 16 bytes (IPv4 mapped into IPv6), to count
 * connections per address; zeros for another family.
 */
void addr_key(const struct sockaddr_storage *ss, uint8_t ret_key[16]);
/* nng's form of an AF_INET or AF_INET6 address as the system's. */
int addr_from_nng(const nng_sockaddr *na, struct sockaddr_storage *ret_ss);

#endif
