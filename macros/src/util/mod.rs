//! Helpers shared by the macros.

pub(crate) mod attr_fn;
pub(crate) mod docs;
pub(crate) mod errors;
pub(crate) mod fn_value;
pub(crate) mod param_attrs;
pub(crate) mod resolved;
pub(crate) mod spans;

/// The type a function returns (`()` when it declares none).
pub(crate) fn return_type(output: &syn::ReturnType) -> syn::Type {
    match output {
        syn::ReturnType::Default => syn::parse_quote!(()),
        syn::ReturnType::Type(_, ty) => (**ty).clone(),
    }
}
