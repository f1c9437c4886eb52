#ifndef COUNTERSIGN_COPENSSL_SHIM_H
#define COUNTERSIGN_COPENSSL_SHIM_H

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

// OpenSSL spells some of its API as function-like macros, which Swift cannot import.
// Each gets a static inline twin here; add more beside them as the wrapper needs them.

static inline void countersign_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

// Frees memory that held secrets (DER of private keys) after overwriting it.
static inline void countersign_OPENSSL_clear_free(void *pointer, size_t length) {
    OPENSSL_clear_free(pointer, length);
}

// MARK: - STACK_OF(X509)

static inline STACK_OF(X509) *countersign_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

static inline int countersign_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}

static inline int countersign_sk_X509_num(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}

static inline X509 *countersign_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

// Frees the stack and drops one reference of every certificate in it.
static inline void countersign_sk_X509_pop_free(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}

// Frees the stack only; the certificates stay owned by whoever else holds them.
static inline void countersign_sk_X509_free(STACK_OF(X509) *stack) {
    sk_X509_free(stack);
}

// MARK: - BIO

// BIO_get_mem_data is a macro over BIO_ctrl; the data stays owned by the BIO.
static inline long countersign_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

// MARK: - Constants built from several macros

// The flags `openssl x509 -nameopt RFC2253` prints with.
static inline unsigned long countersign_XN_FLAG_RFC2253(void) {
    return XN_FLAG_RFC2253;
}

// MARK: - Errors

static inline int countersign_ERR_GET_LIB(unsigned long error) {
    return ERR_GET_LIB(error);
}

static inline int countersign_ERR_GET_REASON(unsigned long error) {
    return ERR_GET_REASON(error);
}

#endif
