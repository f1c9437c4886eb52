#ifndef COUNTERSIGN_COPENSSL_SHIM_H
#define COUNTERSIGN_COPENSSL_SHIM_H

#include <string.h>
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
#include <openssl/ssl.h>
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

// MARK: - Key-derivation work asked for by password-based encryption

// The work an encryption algorithm identifier asks of its key derivation: PBKDF2's or PBES1's
// (PKCS#12's) iterations, or scrypt's N * r * p; -1 when its parameters cannot be read. An
// uploader chooses these numbers, and so what opening the file costs.
static inline long countersign_kdf_work(const X509_ALGOR *algorithm) {
    const ASN1_OBJECT *oid = NULL;
    int type = 0;
    const void *value = NULL;
    X509_ALGOR_get0(&oid, &type, &value, algorithm);
    if (type != V_ASN1_SEQUENCE || value == NULL) return -1;
    const ASN1_STRING *sequence = value;
    const unsigned char *cursor = ASN1_STRING_get0_data(sequence);
    long length = ASN1_STRING_length(sequence);
    long work = -1;
    if (OBJ_obj2nid(oid) == NID_pbes2) {
        PBE2PARAM *pbes2 = d2i_PBE2PARAM(NULL, &cursor, length);
        if (pbes2 == NULL) return -1;
        const ASN1_OBJECT *kdf = NULL;
        int kdfType = 0;
        const void *kdfValue = NULL;
        X509_ALGOR_get0(&kdf, &kdfType, &kdfValue, pbes2->keyfunc);
        if (kdfType == V_ASN1_SEQUENCE && kdfValue != NULL) {
            const ASN1_STRING *kdfSequence = kdfValue;
            const unsigned char *kdfCursor = ASN1_STRING_get0_data(kdfSequence);
            long kdfLength = ASN1_STRING_length(kdfSequence);
            if (OBJ_obj2nid(kdf) == NID_id_pbkdf2) {
                PBKDF2PARAM *pbkdf2 = d2i_PBKDF2PARAM(NULL, &kdfCursor, kdfLength);
                if (pbkdf2 != NULL) {
                    work = ASN1_INTEGER_get(pbkdf2->iter);
                    PBKDF2PARAM_free(pbkdf2);
                }
            } else if (OBJ_obj2nid(kdf) == NID_id_scrypt) {
                SCRYPT_PARAMS *scrypt = d2i_SCRYPT_PARAMS(NULL, &kdfCursor, kdfLength);
                if (scrypt != NULL) {
                    long n = ASN1_INTEGER_get(scrypt->costParameter);
                    long r = ASN1_INTEGER_get(scrypt->blockSize);
                    long p = ASN1_INTEGER_get(scrypt->parallelizationParameter);
                    // Each factor at most 2^20, so the product fits a long; beyond, it is unreadable.
                    if (n > 0 && r > 0 && p > 0 && n <= (1L << 20) && r <= (1L << 20) && p <= (1L << 20)) {
                        work = n * r * p;
                    }
                    SCRYPT_PARAMS_free(scrypt);
                }
            }
        }
        PBE2PARAM_free(pbes2);
    } else {
        PBEPARAM *pbes1 = d2i_PBEPARAM(NULL, &cursor, length);
        if (pbes1 == NULL) return -1;
        work = ASN1_INTEGER_get(pbes1->iter);
        PBEPARAM_free(pbes1);
    }
    return work;
}

// 1 when the derivation of `algorithm` asks for at most `limit` and fits in what is left of
// `budget`, which it then takes. A budget for the whole file besides the cap per derivation: a
// file repeating one encrypted part hundreds of times passes the cap, each copy costing a
// derivation at it.
static inline int countersign_kdf_work_within(const X509_ALGOR *algorithm, long limit, long *budget) {
    long work = countersign_kdf_work(algorithm);
    if (work < 0 || work > limit || work > *budget) return 0;
    *budget -= work;
    return 1;
}

// 1 when the shrouded key bags in `bags` each ask for at most `limit` and fit in `budget`
// together (see countersign_kdf_work).
static inline int countersign_pkcs12_bags_within(const STACK_OF(PKCS12_SAFEBAG) *bags, long limit, long *budget) {
    for (int index = 0; index < sk_PKCS12_SAFEBAG_num(bags); index++) {
        const PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, index);
        int nid = PKCS12_SAFEBAG_get_nid(bag);
        if (nid == NID_pkcs8ShroudedKeyBag) {
            const X509_ALGOR *algorithm = NULL;
            X509_SIG_get0(PKCS12_SAFEBAG_get0_pkcs8(bag), &algorithm, NULL);
            if (algorithm == NULL || !countersign_kdf_work_within(algorithm, limit, budget)) return 0;
        } else if (nid == NID_safeContentsBag) {
            // PKCS12_parse descends into nested bags and decrypts the key bags it finds there.
            // The nesting is as deep as the ASN.1 decoder allowed (ASN1_MAX_CONSTRUCTED_NEST).
            if (!countersign_pkcs12_bags_within(PKCS12_SAFEBAG_get0_safes(bag), limit, budget)) return 0;
        }
    }
    return 1;
}

// 1 when each password-based encryption in `p12` (its encrypted contents, and the shrouded key
// bags in them) asks for at most `limit`, and all of them for at most `total` together; 0
// otherwise, or when its contents cannot be read. Each encrypted part is checked before it is
// decrypted, with the password already verified by the MAC, so no derivation beyond either ever
// runs.
static inline int countersign_pkcs12_kdf_within(PKCS12 *p12, const char *password, int passwordLength, long limit, long total) {
    STACK_OF(PKCS7) *safes = PKCS12_unpack_authsafes(p12);
    if (safes == NULL) return 0;
    long budget = total;
    int within = 1;
    for (int index = 0; within && index < sk_PKCS7_num(safes); index++) {
        PKCS7 *safe = sk_PKCS7_value(safes, index);
        STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
        int type = OBJ_obj2nid(safe->type);
        if (type == NID_pkcs7_data) {
            bags = PKCS12_unpack_p7data(safe);
        } else if (type == NID_pkcs7_encrypted) {
            if (safe->d.encrypted == NULL || safe->d.encrypted->enc_data == NULL
                || !countersign_kdf_work_within(safe->d.encrypted->enc_data->algorithm, limit, &budget)) {
                within = 0;
                break;
            }
            bags = PKCS12_unpack_p7encdata(safe, password, passwordLength);
        }
        if (bags != NULL) {
            within = countersign_pkcs12_bags_within(bags, limit, &budget);
            sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
        }
    }
    sk_PKCS7_pop_free(safes, PKCS7_free);
    return within;
}

// 1 when the `ENCRYPTED PRIVATE KEY` blocks of the PEM text in `bio` ask for at most `limit`
// iterations together (so each at most that).
static inline int countersign_pem_keys_kdf_within(BIO *bio, long limit) {
    long budget = limit;
    char *name = NULL;
    char *header = NULL;
    unsigned char *data = NULL;
    long length = 0;
    int within = 1;
    while (within && PEM_read_bio(bio, &name, &header, &data, &length) == 1) {
        if (strcmp(name, PEM_STRING_PKCS8) == 0) {
            const unsigned char *cursor = data;
            X509_SIG *sig = d2i_X509_SIG(NULL, &cursor, length);
            const X509_ALGOR *algorithm = NULL;
            if (sig != NULL) X509_SIG_get0(sig, &algorithm, NULL);
            within = algorithm != NULL && countersign_kdf_work_within(algorithm, limit, &budget);
            X509_SIG_free(sig);
        }
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_clear_free(data, length);
        name = NULL;
        header = NULL;
        data = NULL;
    }
    ERR_clear_error();
    return within;
}

#endif
