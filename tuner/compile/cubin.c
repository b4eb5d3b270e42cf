/* cubin.c - entry points and parameter sizes out of a CUBIN's ELF (see cubin.h). */
#include "compile/cubin.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* st_other flag of a CUDA kernel's symbol (observed in every CUBIN from nvcc
 * and NVRTC 12-13: kernels 0x10, device functions 0). */
#define STO_CUDA_ENTRY 0x10
/* .nv.info attribute formats: every record is a 4-byte header (format,
 * attribute, 16-bit value or size); EIFMT_SVAL records carry `size` bytes. */
#define EIFMT_SVAL 0x04
/* EIATTR_KPARAM_INFO: u32 index, u16 ordinal, u16 offset, u32 flags whose
 * bits 18..31 are the parameter's size in bytes. */
#define EIATTR_KPARAM_INFO 0x17

struct elf {
	const unsigned char *b;
	size_t size;
	const Elf64_Shdr *sh;
	int nsh;
	const char *shstr;
	size_t shstr_size;
};

static int elf_open(struct elf *e, const void *image, size_t size)
{
	const Elf64_Ehdr *h = image;

	memset(e, 0, sizeof(*e));
	e->b = image;
	e->size = size;
	if (!image || size < sizeof(*h) || memcmp(h->e_ident, ELFMAG, SELFMAG) ||
	    h->e_ident[EI_CLASS] != ELFCLASS64 || h->e_shentsize != sizeof(Elf64_Shdr) ||
	    h->e_shoff > size || (size - h->e_shoff) / sizeof(Elf64_Shdr) < h->e_shnum ||
	    h->e_shstrndx >= h->e_shnum || h->e_shoff % 8)
		return -1;
	e->sh = (const Elf64_Shdr *)(e->b + h->e_shoff);
	e->nsh = h->e_shnum;
	if (e->sh[h->e_shstrndx].sh_offset > size ||
	    e->sh[h->e_shstrndx].sh_size > size - e->sh[h->e_shstrndx].sh_offset)
		return -1;
	e->shstr = (const char *)e->b + e->sh[h->e_shstrndx].sh_offset;
	e->shstr_size = e->sh[h->e_shstrndx].sh_size;
	return 0;
}

/* A NUL-terminated string at off inside a table, or NULL. */
static const char *str_at(const char *tab, size_t tab_size, size_t off)
{
	if (off >= tab_size || !memchr(tab + off, '\0', tab_size - off))
		return NULL;
	return tab + off;
}

/* The bytes of section i, or NULL when they lie outside the image. */
static const unsigned char *section(const struct elf *e, int i, size_t *len)
{
	const Elf64_Shdr *s = &e->sh[i];

	if (s->sh_type == SHT_NOBITS || s->sh_offset > e->size || s->sh_size > e->size - s->sh_offset)
		return NULL;
	*len = s->sh_size;
	return e->b + s->sh_offset;
}

static int find_section(const struct elf *e, const char *name)
{
	for (int i = 0; i < e->nsh; i++) {
		const char *n = str_at(e->shstr, e->shstr_size, e->sh[i].sh_name);
		if (n && !strcmp(n, name))
			return i;
	}
	return -1;
}

/* Calls fn for every entry point's name; stops when fn returns non-zero. */
static int each_entry(const struct elf *e, int (*fn)(const char *name, void *arg), void *arg)
{
	int sym = -1, n = 0;
	const unsigned char *syms;
	const char *strs;
	size_t len, slen;

	for (int i = 0; i < e->nsh; i++)
		if (e->sh[i].sh_type == SHT_SYMTAB)
			sym = i;
	if (sym < 0 || e->sh[sym].sh_link >= (Elf64_Word)e->nsh ||
	    !(syms = section(e, sym, &len)) ||
	    !(strs = (const char *)section(e, (int)e->sh[sym].sh_link, &slen)))
		return 0;
	for (size_t off = 0; off + sizeof(Elf64_Sym) <= len; off += sizeof(Elf64_Sym)) {
		Elf64_Sym s;
		const char *name;

		memcpy(&s, syms + off, sizeof(s));
		if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || ELF64_ST_BIND(s.st_info) != STB_GLOBAL ||
		    !(s.st_other & STO_CUDA_ENTRY) || !(name = str_at(strs, slen, s.st_name)) || !*name)
			continue;
		n++;
		if (fn && fn(name, arg))
			break;
	}
	return n;
}

struct find_arg {
	const char *name;
	int found;
};

static int match(const char *name, void *arg)
{
	struct find_arg *f = arg;

	f->found = !strcmp(name, f->name);
	return f->found;
}

long long ft_cubin_param_bytes(const void *image, size_t size, const char *name, int *nparams)
{
	struct elf e;
	struct find_arg f = { name, 0 };
	char secname[320];
	const unsigned char *p;
	size_t len;
	long long total = 0;
	int s;

	if (nparams)
		*nparams = 0;
	if (elf_open(&e, image, size))
		return -2;
	each_entry(&e, match, &f);
	if (!f.found)
		return -1;
	snprintf(secname, sizeof(secname), ".nv.info.%s", name);
	if ((s = find_section(&e, secname)) < 0)
		return 0; /* no attributes at all: no parameters */
	if (!(p = section(&e, s, &len)))
		return -2;
	for (size_t off = 0; off + 4 <= len;) {
		uint8_t fmt = p[off], attr = p[off + 1];
		uint16_t val = (uint16_t)(p[off + 2] | p[off + 3] << 8);

		off += 4;
		if (fmt != EIFMT_SVAL)
			continue;
		if (val > len - off)
			return -2;
		if (attr == EIATTR_KPARAM_INFO && val >= 12) {
			uint32_t flags;
			memcpy(&flags, p + off + 8, 4);
			total += (flags >> 18) & 0x3fff;
			if (nparams)
				(*nparams)++;
		}
		off += val;
	}
	return total;
}

struct list_arg {
	char *buf;
	size_t size, n;
};

static int add_name(const char *name, void *arg)
{
	struct list_arg *l = arg;

	if (l->n < l->size)
		l->n += (size_t)snprintf(l->buf + l->n, l->size - l->n, "%s%s", l->n ? ", " : "", name);
	return 0;
}

int ft_cubin_entries(const void *image, size_t size, char *buf, size_t bufsize)
{
	struct elf e;
	struct list_arg l = { buf, bufsize, 0 };

	if (bufsize)
		buf[0] = '\0';
	if (elf_open(&e, image, size))
		return 0;
	return each_entry(&e, bufsize ? add_name : NULL, &l);
}
