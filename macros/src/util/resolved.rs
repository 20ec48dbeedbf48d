//! The `#[resolve(path)]` parameters of a `#[tool]`, `#[prompt]` or `#[resource]`, as codegen
//! needs them: one `ResolveSlot` each (in order: their index in `resolvers()` and in the call's
//! resolved values), the compile-time check of each resolver against the arguments, and the
//! arguments themselves as `HasArg` impls on a type named after the item.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

/// The type the resolvers' parameters are checked against, named after the item (it appears
/// in rustc's notes when a resolver reads an argument the item does not have): `{name}_{what}`,
/// e.g. `delete_folder_arguments`.
pub(crate) fn args_type(name: &str, what: &str) -> Ident {
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    let clean = if clean.starts_with(|c: char| c.is_ascii_digit()) || clean.is_empty() {
        format!("_{clean}")
    } else {
        clean
    };
    format_ident!("{}_{}", clean, what, span = Span::mixed_site())
}

/// The resolved parameters of one item, collected in order.
pub(crate) struct Slots {
    entries: Vec<TokenStream>,
    checks: Vec<TokenStream>,
    /// The resolvers checked already (their paths), so a resolver taken by two parameters is
    /// checked, and its mistakes reported, once.
    checked: Vec<String>,
}

impl Slots {
    /// No slots yet.
    pub(crate) fn new() -> Self {
        Self {
            entries: Vec::new(),
            checks: Vec::new(),
            checked: Vec::new(),
        }
    }

    /// `ResolverFn::def(&path)`, spanned on the path: every use of the path goes through it, so
    /// a function that is not a `#[resolver]` is one error, there.
    pub(crate) fn def_of(krate: &TokenStream, path: &syn::Path) -> TokenStream {
        let span = path.span();
        let krate = crate::util::spans::respanned(krate, span);
        quote_spanned! {span=> #krate::__private01::ResolverFn::def(&#path) }
    }

    /// Adds `#[resolve(path)]` parameter `param`, checked against `args_ty`; returns its index.
    pub(crate) fn resolve(&mut self, krate: &TokenStream, args_ty: &Ident, path: &syn::Path, param: &str) -> usize {
        let def = Self::def_of(krate, path);
        // Spanned on the path like the call's own use (`take_resolved`), so that rustc reports
        // a path that is not a resolver once for both.
        let slot_krate = crate::util::spans::respanned(krate, path.span());
        self.entries.push(quote_spanned! {path.span()=>
            #slot_krate::__private01::ResolveSlot { param: #param, resolver: #def.spec }
        });
        let key = quote!(#path).to_string();
        if !self.checked.contains(&key) {
            self.checked.push(key);
            // The resolver, its parameters and its dependencies fit the item's arguments: one
            // bound, taken from the function's value, so nothing the resolver names needs to be
            // in scope here, and a function that is not a resolver is the one error.
            let krate = crate::util::spans::respanned(krate, path.span());
            self.checks.push(quote_spanned! {path.span()=>
                const _: () = {
                    fn __mcp_resolve_fits() {
                        #krate::__private01::fits::<#args_ty, _, _>(&#path);
                    }
                };
            });
        }
        self.entries.len() - 1
    }

    /// Adds `#[resolve(path)]` parameter `ident: ty` of a prompt or resource and returns the
    /// statement that binds it to `local` (see [`param_locals`](crate::util::param_locals)) in
    /// the generated body: `getter` (`resolved`, one for prompts and resources) reads the value
    /// from `__call`, and its error ends the request.
    pub(crate) fn bind(
        &mut self,
        krate: &TokenStream,
        args_ty: &Ident,
        (path, ident, ty): (&syn::Path, &Ident, &Type),
        local: &Ident,
        getter: &str,
    ) -> TokenStream {
        let name = crate::util::spans::unraw(ident);
        let index = self.resolve(krate, args_ty, path, &name);
        let getter = Ident::new(getter, Span::call_site());
        let def = Self::def_of(krate, path);
        quote_spanned! {ty.span()=>
            let #local = #krate::__private01::#getter::<#ty, _, _>(#def, &__call, #index, #name)?;
        }
    }

    /// The index the next slot gets.
    pub(crate) fn next_index(&self) -> usize {
        self.entries.len()
    }

    /// Adds a slot whose resolver is generated with the item (`#[confirm]`).
    pub(crate) fn generated(&mut self, entry: TokenStream) {
        self.entries.push(entry);
    }

    /// Whether there is none.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The resolvers' checks: each resolver must fit the arguments' type.
    pub(crate) fn checks(&self) -> &[TokenStream] {
        &self.checks
    }

    /// `fn resolvers(&self)` of the item's trait impl, or nothing without any slot.
    pub(crate) fn resolvers_fn(&self, krate: &TokenStream) -> TokenStream {
        if self.entries.is_empty() {
            return quote!();
        }
        let n = self.entries.len();
        let entries = &self.entries;
        quote! {
            fn resolvers(&self) -> &'static [#krate::__private01::ResolveSlot] {
                // Made in a function body, as the call's own uses of each resolver are, so a
                // path that is not a resolver is one error rather than one per context.
                static __RESOLVED: ::std::sync::LazyLock<[#krate::__private01::ResolveSlot; #n]> =
                    ::std::sync::LazyLock::new(|| [#(#entries),*]);
                &*__RESOLVED
            }
        }
    }
}

/// The arguments' type and one `HasArg` impl per argument (its wire key and its type), so a
/// resolver parameter naming no argument, or of another type, fails to compile at that
/// parameter.
pub(crate) fn has_args<'a>(
    krate: &TokenStream,
    args_ty: &Ident,
    args: impl IntoIterator<Item = (&'a str, TokenStream)>,
) -> TokenStream {
    let impls = args.into_iter().map(|(key, ty)| {
        quote! {
            impl #krate::__private01::HasArg<{ #krate::__private01::name_hash(#key) }> for #args_ty {
                type Ty = #ty;
            }
        }
    });
    quote! {
        /// The arguments, by name: resolvers are checked against them.
        #[allow(dead_code)]
        struct #args_ty;
        #(#impls)*
    }
}

/// `ty` as tokens, for [`has_args`].
pub(crate) fn ty(ty: &Type) -> TokenStream {
    quote!(#ty)
}
