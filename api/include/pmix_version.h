/*
 * pmix_version.h - version of the OpenPMIx release whose ABI this library
 * provides (4.2.2). The values equal OpenPMIx's, including the long suffix.
 */
#ifndef PMIx_VERSION_H
#define PMIx_VERSION_H

#define PMIX_VERSION_MAJOR 4L
#define PMIX_VERSION_MINOR 2L
#define PMIX_VERSION_RELEASE 2L

/* 0x00MMmmrr: major, minor, release as one number for #if tests. */
#define PMIX_NUMERIC_VERSION 0x00040202

#endif /* PMIx_VERSION_H */
